import ArgumentParser
import Foundation
import LedgerJSON
import LedgerOutput
import PurchaseLedger

struct Unconsumed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A user's payments whose goods were not handed out yet (neither consumed nor refunded).")

    @OptionGroup var user: UserOptions
    @OptionGroup var stores: StoreFilterOptions
    @OptionGroup var output: OutputOptions
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let payments = try await database.withLedger { try await $0.unconsumed(userId: user.userId, stores: stores.set) }
        if output.json {
            var w = JSONWriter()
            w.beginArray()
            for payment in payments { payment.write(into: &w) }
            w.endArray()
            print(w.string)
        } else {
            print(Table(
                ["paymentSeq", "store", "product", "type", "price", "purchased (UTC)", "expires (UTC)"],
                payments.map {
                    [$0.paymentSeq, $0.storeCode.rawValue, $0.productId, $0.productType.rawValue,
                     "\($0.price) \($0.currency)", $0.purchaseTime.ledgerText, $0.expiryTime?.ledgerText ?? ""]
                }).render(empty: "no unconsumed payments for \(user.userId)"))
        }
    }
}
