import ArgumentParser
import Foundation
import LedgerJSON
import LedgerOutput
import PurchaseLedger

struct Lookup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "One payment, by its name, its store transaction, its Google order id or purchase token: its owner and what became of it.",
        discussion: """
            Exit status 1 and NOT_FOUND when the ledger has no such payment. The same answer as \
            GET and POST /v1/lookup; never the purchase token.
            """)

    @Option(help: "The payment's paymentSeq (or the name an SDK line gave a payment first learned from a store).")
    var paymentSeq: String?
    @Option(name: .customLong("store"), help: "AS or GG: the store of --transaction-id.")
    var storeCode: StoreCode?
    @Option(help: "The store's transaction id (with --store).")
    var transactionId: String?
    @Option(help: "Google Play's order id (GPA.…), its transaction id.")
    var orderId: String?
    @Flag(help: """
        Read a Google Play purchase token from the first line of standard input (never from the \
        command line, where other users' ps would show it): the payment it names, the latest \
        renewal for a subscription's token.
        """)
    var purchaseTokenStdin = false
    @OptionGroup var output: OutputOptions
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let key: PaymentKey
        do {
            let token = purchaseTokenStdin ? readLine(strippingNewline: true) ?? "" : nil
            key = try PaymentKey(paymentSeq: paymentSeq, storeCode: storeCode, transactionId: transactionId, orderId: orderId,
                                 purchaseToken: token)
        } catch {
            // The library names the field; the command names its option.
            throw ValidationError(error.message.replacing("storeCode", with: "--store")
                .replacing("paymentSeq", with: "--payment-seq").replacing("transactionId", with: "--transaction-id")
                .replacing("orderId", with: "--order-id").replacing("purchaseToken", with: "--purchase-token-stdin"))
        }
        guard let record = try await database.withLedger({ try await $0.lookup(key) }) else {
            throw LedgerError(.notFound, "no payment \(key)")
        }
        if output.json {
            var w = JSONWriter()
            record.write(into: &w)
            print(w.string)
            return
        }
        let payment = record.payment
        let rows: [(String, String?)] = [
            ("paymentSeq", payment.paymentSeq), ("user", payment.userId), ("store", payment.storeCode.rawValue),
            ("product", "\(payment.productId) (\(payment.productType.rawValue))"),
            ("price", "\(payment.price) \(payment.currency)"), ("transaction", payment.transactionId),
            ("lineage", payment.originalTransactionId), ("purchased (UTC)", payment.purchaseTime.ledgerText),
            ("expires (UTC)", payment.expiryTime?.ledgerText), ("kind", record.kind),
            ("learned from", record.fromStore ? "a store notification only" : "the backend (an SDK line)"),
            ("sandbox", payment.sandboxPayment ? "yes" : nil), ("recorded (UTC)", record.recordedAt.ledgerText),
            ("consumed (UTC)", record.consumedAt?.ledgerText), ("refunded (UTC)", record.refundedAt?.ledgerText),
            ("refund reason", record.refundReason),
        ]
        print(Table(["field", "value"], rows.compactMap { name, value in value.map { [name, $0] } }).render(empty: ""))
    }
}
