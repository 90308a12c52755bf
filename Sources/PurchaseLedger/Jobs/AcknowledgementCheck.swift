import Crypto

/// Google refunds a purchase nobody acknowledged within three days (docs/contract.md §6.3). A payment
/// that reaches the ledger through an SDK line (`purchase`, `renewal`, a restore's purchases)
/// gets, when Google's API is configured, a job written in the transaction that records it: it
/// reads the purchase (`subscriptionsv2` for a subscription, `productsv2` for everything else,
/// since Play's one-time products are all in-app products) and acknowledges it when the answer
/// says pending, through the one acknowledgement job per token that the notification path uses
/// too, so a purchase is acknowledged once whichever channel saw it first. The read records
/// nothing else.
extension LedgerCommand {
    /// The command with the jobs the configured stores ask for (only Google payments from lines
    /// get one; without Google's API, or without a package name to ask about, none).
    package func askingStores(_ stores: StoreConfiguration) -> LedgerCommand {
        guard stores.asksGoogle, !stores.googlePackageNames.isEmpty else { return self }
        switch self {
        case .record(var payment, let kind) where payment.storeCode == .googlePlay:
            payment.storeCheck = payment.acknowledgementCheck(packageNames: stores.googlePackageNames)
            return .record(payment, kind: kind)
        case .restore(let user, .googlePlay, let time, var purchases):
            for index in purchases.indices {
                purchases[index].storeCheck = purchases[index].acknowledgementCheck(packageNames: stores.googlePackageNames)
            }
            return .restore(userId: user, storeCode: .googlePlay, time: time, purchases: purchases)
        default:
            return self
        }
    }
}

extension Payment {
    /// The read-then-acknowledge job of this Google payment. A line does not say which app it
    /// came from, so the job asks about each configured package in turn (in name order) until
    /// one knows the token: with one package, that one.
    func acknowledgementCheck(packageNames: Set<String>) -> StoreJob {
        let digest = SHA256.lowercaseHex(of: Array(purchaseToken.utf8))
        return StoreJob(
            kind: .googleCheck, purpose: "check:GG:\(digest)",
            args: ["packageName": packageNames.sorted().joined(separator: ","), "productId": productId,
                   "type": productType.isSubscription ? "subscription" : "product",
                   "paymentSeq": paymentSeq, "purchaseTokenSha256": digest],
            secret: purchaseToken)
    }
}
