import Foundation
import LedgerJSON

/// A verified store notification, in the ledger's words: what it does (`effect`) and the facts
/// the effect needs, plus the store's own text kept as proof. Made by
/// `AppleNotificationDecoder` and `GoogleNotificationDecoder`; applied by `ledger.notify`
/// (Schema/definitions/commands/notify.sql), which decides owner, parking and duplicates.
public struct StoreNotification: Sendable, Hashable {
    /// What a notification does to the ledger.
    public enum Effect: String, Sendable, Hashable {
        /// Records its payment (a purchase or a renewal).
        case payment
        /// Google Play, with its API configured (docs/contract.md §6.3): recorded with a
        /// ``StoreJob`` that asks the Play Developer API what happened.
        case ask
        /// The payment the Play Developer API described, as a job learned it: the ledger fills in
        /// the lineage, the product type and, when the answer has none, the price.
        case learnedPayment
        /// Apple's CONSUMPTION_REQUEST, with consumption answers on (§6.4): a job answers it.
        case consumptionRequest
        /// Auto-renew off / back on, at the notification's time.
        case autoRenewOff, autoRenewOn
        /// Billing states of §3.2, from the notification's time.
        case inGracePeriod, billingRetry, onHold, paused
        /// The billing state ends.
        case billingEnded
        /// The payment is refunded (`refundAt`), a refund is undone, family-shared access ends.
        case refund, refundReversed, revoke
        /// The lineage's latest payment is refunded (Google's REVOKED).
        case revokeLatest
        /// The payment's expiry moves to `expiryTime`.
        case extend
        /// Kept in the log, no other effect.
        case ignored
    }

    public var storeCode: StoreCode
    /// `notificationUUID` (App Store) or the Pub/Sub `messageId` (Google Play).
    public var notificationId: String
    /// The store's name for it: `DID_RENEW`, `DID_FAIL_TO_RENEW/GRACE_PERIOD`, `subscription/6`, `voided`...
    public var notificationType: String
    public var effect: Effect
    /// The store's own time: `signedDate`, or `eventTimeMillis`.
    public var effectiveAt: Date
    public var transactionId: String?
    public var originalTransactionId: String?
    /// App Store: whose notifications these are, through an `accountLink` line.
    public var appAccountToken: String?
    /// App Store: `consumable` or `subscription`, from the transaction's `type`.
    public var storeProductType: String?
    /// The payment as §2.1 command fields (App Store: without `userId`, `productType` and `paymentSeq`,
    /// which the ledger decides; Google Play: the `payment` the backend attached, whole).
    public var payment: String?
    /// When a refund or revocation took effect.
    public var refundAt: Date?
    public var reason: String?
    /// A renewal-date extension's new expiry.
    public var expiryTime: Date?
    public var gracePeriodExpiresAt: Date?
    /// Google Play: the purchase token's SHA-256, hex (the token itself is never kept).
    public var purchaseTokenSha256: String?
    /// Google Play: the order of a voided purchase.
    public var orderId: String?
    /// The store's text as received, as JSON: `{"signedPayload": ...}` or Google's push body
    /// with the token replaced by its digest.
    public var proof: String
    /// App Store: the notification's environment (`Production`, `Sandbox`), which a job's call
    /// to the App Store Server API goes to.
    public var environment: String?
    /// App Store: the app the notification is about (its API calls are signed for it).
    public var bundleId: String?
    /// The job an `ask` writes with it; never kept in the event (its secret is the purchase token).
    public var job: StoreJob?

    public init(storeCode: StoreCode, notificationId: String, notificationType: String, effect: Effect,
                effectiveAt: Date, proof: String) {
        self.storeCode = storeCode
        self.notificationId = notificationId
        self.notificationType = notificationType
        self.effect = effect
        self.effectiveAt = effectiveAt
        self.proof = proof
    }

    /// The event data `ledger.notify` takes: every fact under its name, times in UTC with microseconds.
    func eventData() -> String {
        var w = JSONWriter()
        w.beginObject()
        w.field("storeCode", storeCode.rawValue)
        w.field("notificationId", notificationId)
        w.field("notificationType", notificationType)
        w.field("effect", effect.rawValue)
        w.field("effectiveAt", Timestamp(effectiveAt).iso8601Microseconds)
        let optional: [(String, String?)] = [
            ("transactionId", transactionId), ("originalTransactionId", originalTransactionId),
            ("appAccountToken", appAccountToken), ("storeProductType", storeProductType),
            ("refundAt", refundAt.map { Timestamp($0).iso8601Microseconds }), ("reason", reason),
            ("expiryTime", expiryTime.map { Timestamp($0).iso8601Microseconds }),
            ("gracePeriodExpiresAt", gracePeriodExpiresAt.map { Timestamp($0).iso8601Microseconds }),
            ("purchaseTokenSha256", purchaseTokenSha256), ("orderId", orderId), ("environment", environment), ("bundleId", bundleId),
        ]
        for (key, value) in optional where value != nil { w.field(key, value) }
        if let payment {
            w.key("payment")
            w.rawJSON(payment)
        }
        w.key("received")
        w.rawJSON(proof)
        if let job {
            w.key("job")
            job.write(into: &w)
        }
        w.endObject()
        return w.string
    }
}

extension JSONWriter {
    /// Writes `json`, text that is already one valid JSON value (written by a `JSONWriter`).
    mutating func rawJSON(_ json: String) {
        rawNumber(json)
    }
}
