import Foundation
import PurchaseLedger

extension ReferenceModel {
    /// A Google Play notification (docs/contract.md §5.3): a duplicate by its messageId; ignored
    /// when it has no effect; parked while the ledger knows neither its token nor its order; else
    /// applied by the table of §5.3.
    mutating func notify(_ notice: GoogleNotice) -> ExpectedOutcome {
        let id = notice.messageId
        if notificationsSeen.contains(id) { return ExpectedOutcome(.duplicate, notificationId: id) }
        if case .test = notice.kind {
            notificationsSeen.insert(id)
            return ExpectedOutcome(.ignored, notificationId: id)
        }
        if case .subscription(let type) = notice.kind, [1, 2, 4].contains(type) {
            // A payment notification without the payment attached.
            notificationsSeen.insert(id)
            return ExpectedOutcome(.ignored, notificationId: id)
        }
        guard isKnown(notice) else {
            parked.append((notice, notificationsSeen.count))
            notificationsSeen.insert(id)
            return ExpectedOutcome(.parked, notificationId: id)
        }
        var outcome = applyNotice(notice)
        outcome.notificationId = id
        if outcome.status != .rejected { notificationsSeen.insert(id) }
        return outcome
    }

    /// Whether the ledger knows what the notification is about: a voided purchase's order, a
    /// subscription notification's token.
    private func isKnown(_ notice: GoogleNotice) -> Bool {
        if case .voided(let orderId) = notice.kind { return order(orderId) != nil }
        return latestHolding(notice.purchaseToken) != nil
    }

    /// The payment of a Google Play order.
    private func order(_ orderId: String) -> Payment? {
        transactions[TransactionKey(storeCode: .googlePlay, transactionId: orderId)].flatMap { payments[$0]?.payment }
    }

    /// The latest Google Play payment holding `token`.
    private func latestHolding(_ token: String) -> Payment? {
        payments.values.map(\.payment).filter { $0.storeCode == .googlePlay && $0.purchaseToken == token }
            .max { ($0.purchaseTime, $0.paymentSeq) < ($1.purchaseTime, $1.paymentSeq) }
    }

    /// The effect of §5.3's table, on a notification whose payment the ledger knows.
    private mutating func applyNotice(_ notice: GoogleNotice) -> ExpectedOutcome {
        switch notice.kind {
        case .test:
            return ExpectedOutcome(.ignored)
        case .voided(let orderId):
            // The payment (GG, orderId) is refunded at eventTimeMillis (§2.4: a second refund
            // is a duplicate), a consumable's or a subscription's; not another payment holding
            // the same token.
            guard let payment = order(orderId) else { return .refused(.notFound) }
            return refund(payment.paymentSeq, at: notice.eventTime)
        case .subscription(let type):
            // The lineage is the one whose payment holds the token.
            guard let holder = latestHolding(notice.purchaseToken), let lineage = holder.lineageId else {
                return .refused(.notFound)
            }
            let key = LineageKey(storeCode: .googlePlay, originalTransactionId: lineage)
            switch type {
            case 3: lineages[key]?.autoRenewChanges.append((notice.eventTime, false))
            case 7: lineages[key]?.autoRenewChanges.append((notice.eventTime, true))
            case 6: lineages[key]?.billingStates.append((notice.eventTime, .inGracePeriod))
            case 5: lineages[key]?.billingStates.append((notice.eventTime, .onHold))
            case 10: lineages[key]?.billingStates.append((notice.eventTime, .paused))
            case 13: lineages[key]?.billingStates.append((notice.eventTime, nil))
            case 12:
                // REVOKED: the latest payment of the token's lineage is refunded at
                // eventTimeMillis, whichever token that payment holds.
                guard let latest = lineagePayments(key).map(\.payment)
                    .max(by: { ($0.purchaseTime, $0.paymentSeq) < ($1.purchaseTime, $1.paymentSeq) }) else {
                    return .refused(.notFound)
                }
                return refund(latest.paymentSeq, at: notice.eventTime)
            default:
                return ExpectedOutcome(.ignored)
            }
            return ExpectedOutcome(.recorded)
        }
    }

    /// A Google Play payment was recorded: the parked notifications it makes known apply now,
    /// in the stores' order (their own time, then arrival).
    mutating func releaseParked(for payment: Payment) {
        let ready = parked.filter { entry in
            if case .voided(let orderId) = entry.notice.kind { return orderId == payment.transactionId }
            return entry.notice.purchaseToken == payment.purchaseToken
        }.sorted { ($0.notice.eventTime, $0.arrival) < ($1.notice.eventTime, $1.arrival) }
        guard !ready.isEmpty else { return }
        let released = Set(ready.map(\.notice.messageId))
        parked.removeAll { released.contains($0.notice.messageId) }
        for entry in ready { _ = applyNotice(entry.notice) }
    }
}
