import Foundation
import PurchaseLedger

extension ReferenceModel {
    /// §3.1: the user's consumable payments neither consumed nor refunded, by purchase time then
    /// paymentSeq.
    func unconsumed(userId: String) -> [UnconsumedRow] {
        payments.values
            .filter { $0.payment.userId == userId && $0.payment.productType != .autoRenewable
                && $0.consumedAt == nil && $0.refundedAt == nil }
            .map(\.payment)
            .sorted { ($0.purchaseTime, $0.paymentSeq) < ($1.purchaseTime, $1.paymentSeq) }
            .map(UnconsumedRow.init)
    }

    /// §3.2 with `--include-expired`: the user's lineages at `instant`, by store then
    /// originalTransactionId.
    func subscriptions(userId: String, at instant: Date) -> [SubscriptionRow] {
        lineages.filter { $0.value.userId == userId }
            .compactMap { key, lineage in subscription(key, lineage, at: instant) }
            .sorted { ($0.storeCode, $0.originalTransactionId) < ($1.storeCode, $1.originalTransactionId) }
    }

    /// One lineage at `instant`: nil when none of its payments was made by then.
    private func subscription(_ key: LineageKey, _ lineage: LineageState, at instant: Date) -> SubscriptionRow? {
        let made = lineagePayments(key).filter { $0.payment.purchaseTime <= instant }
        guard let first = made.map(\.payment.purchaseTime).min() else { return nil }
        let refundedByThen = { (state: PaymentState) in state.refundedAt.map { $0 <= instant } ?? false }
        // The greatest expiry of the unrefunded payments; ties to the later payment.
        let live = made.filter { !refundedByThen($0) }.map(\.payment)
            .max { ($0.expiryTime ?? .distantPast, $0.purchaseTime, $0.paymentSeq) < ($1.expiryTime ?? .distantPast, $1.purchaseTime, $1.paymentSeq) }
        let latest = made.map(\.payment).max { ($0.purchaseTime, $0.paymentSeq) < ($1.purchaseTime, $1.paymentSeq) }
        let status: Subscription.Status
        // A billing state holds from its time until a renewal paid after it (§3.2, §5.2, §5.3).
        let billing = Self.latest(lineage.billingStates.map { ($0.time, $0.state) }, at: instant)
        let renewedAfterBilling = billing.map { state in
            made.contains { $0.payment.isRenewal && $0.payment.purchaseTime > state.time }
        } ?? false
        if let expiry = live?.expiryTime, expiry > instant {
            status = .active
        } else if let state = billing?.value, !renewedAfterBilling {
            status = state
        } else if made.contains(where: { refundedByThen($0) && ($0.payment.expiryTime ?? .distantPast) > instant }) {
            status = .revoked
        } else {
            status = .expired
        }
        return SubscriptionRow(
            userId: lineage.userId, storeCode: key.storeCode.rawValue, productId: lineage.productId,
            productType: lineage.productType.rawValue, originalTransactionId: key.originalTransactionId,
            latestPaymentSeq: live?.paymentSeq ?? latest?.paymentSeq ?? "", purchaseTime: first,
            expiryTime: live?.expiryTime, autoRenewing: autoRenewing(key, at: instant), status: status)
    }
}
