import Foundation
import PurchaseLedger

extension CommandStreamGenerator {
    /// A notification about a Google Play subscription (one of its lineages' token, or now and
    /// then a token no payment holds), a voided purchase (a consumable or any payment of a
    /// subscription, by its order), or a test.
    mutating func googleNotification() -> GoogleNotice? {
        let n = nextSerial()
        let id = "M\(n)"
        switch random.weighted([14, 4, 1]) {
        case 0:
            let type = random.pick([3, 3, 7, 6, 6, 5, 10, 13, 12, 12, 12, 2]) ?? 3
            if let plan = random.chance(0.9) ? random.pick(plans.filter({ $0.storeCode == .googlePlay })) : nil {
                // Auto-renew changes and revocations while it runs; billing states mostly around its end.
                let days = max(1, Int(plan.end.timeIntervalSince(plan.start) / Self.day)) + 20
                let billing = [6, 5, 10, 13].contains(type) && random.chance(0.7)
                let eventTime = billing ? time(after: plan.end.addingTimeInterval(-3 * Self.day), within: 40)
                    : time(after: plan.start, within: days)
                return GoogleNotice(messageId: id, kind: .subscription(type), purchaseToken: plan.payments[0].purchaseToken,
                                    eventTime: eventTime)
            }
            return GoogleNotice(messageId: id, kind: .subscription(type), purchaseToken: "gtokNOPE\(n)",
                                eventTime: time(after: Self.epoch, within: 200))
        case 1:
            let orders = issued.filter { $0.storeCode == .googlePlay }
            if let payment = random.chance(0.85) ? random.pick(orders) : nil {
                return GoogleNotice(messageId: id, kind: .voided(orderId: payment.transactionId),
                                    purchaseToken: payment.purchaseToken, eventTime: time(after: payment.purchaseTime, within: 30))
            }
            return GoogleNotice(messageId: id, kind: .voided(orderId: "GPANOPE\(n)"), purchaseToken: "gtokNOPE\(n)",
                                eventTime: time(after: Self.epoch, within: 200))
        default:
            return GoogleNotice(messageId: id, kind: .test, purchaseToken: "", eventTime: time(after: Self.epoch, within: 200))
        }
    }
}
