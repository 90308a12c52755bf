import Crypto
import Foundation
import LedgerJSON

/// Reads a Google Play real-time developer notification as Pub/Sub pushes it (docs/contract.md
/// §5.3) and says what it does. The purchase token is kept only as its SHA-256: the proof stored in
/// the log is the push body with `message.data` decoded and every `purchaseToken` replaced by
/// `purchaseTokenSha256` (Google's notifications are not signed; the push itself is
/// authenticated by its HTTP bearer token).
struct GoogleNotificationDecoder {
    let stores: StoreConfiguration

    init(stores: StoreConfiguration) {
        self.stores = stores
    }

    func decode(_ line: FieldReader) throws(LedgerError) -> StoreNotification {
        guard let message = try line.object("message") else { throw line.invalid("message", "missing") }
        let messageId = try message.string("messageId", "message_id", maxLength: 128)
        let encoded = try message.string("data", maxLength: 1 << 20)
        guard let bytes = Self.base64(encoded) else { throw message.invalid("data", "not base64") }
        let developerNotification: JSONObject
        do {
            guard case .object(let object) = try JSONParser.parse(Array(bytes)) else {
                throw LedgerError.invalid("message.data", "expected a DeveloperNotification JSON object")
            }
            developerNotification = object
        } catch let error as LedgerError {
            throw error
        } catch {
            throw LedgerError.invalid("message.data", "not JSON: \(error)")
        }
        let dn = FieldReader(developerNotification, path: "message.data.")
        let package = try dn.optionalString("packageName", maxLength: 255)
        guard let package, stores.googlePackageNames.contains(package) else {
            throw LedgerError(.appMismatch,
                "message.data.packageName: \(package.map { "\"\($0)\"" } ?? "missing"), not an accepted package name (LEDGER_GOOGLE_PACKAGE_NAMES)")
        }
        guard let eventTime = try Self.millis(dn, "eventTimeMillis") else { throw dn.invalid("eventTimeMillis", "missing") }

        var notification = StoreNotification(storeCode: .googlePlay, notificationId: messageId, notificationType: "test",
                                             effect: .ignored, effectiveAt: eventTime,
                                             proof: Self.proof(line.object, developerNotification))
        if let sub = try dn.object("subscriptionNotification") {
            guard let type = try sub.int64("notificationType") else { throw sub.invalid("notificationType", "missing") }
            notification.notificationType = "subscription/\(type)"
            let token = try sub.string("purchaseToken", maxLength: LedgerCommand.Limits.purchaseToken)
            notification.purchaseTokenSha256 = Self.digest(token)
            let hasPayment = line.value(["payment"]) != nil
            notification.effect = Self.effect(subscriptionType: type, hasPayment: hasPayment)
            if notification.effect == .payment {
                notification.payment = try payment(line, token: sub, tokenDigest: notification.purchaseTokenSha256!)
            } else if stores.asksGoogle, !hasPayment, [1, 2, 4, 7].contains(type) {
                // RECOVERED, RENEWED, PURCHASED, RESTARTED: only subscriptionsv2 says what was paid (§6.3).
                // RESTARTED keeps its own effect too (§5.3: auto-renew back on).
                Self.ask(&notification, .googleSubscription, package: package, token: token,
                         product: ("subscriptionId", try sub.optionalString("subscriptionId", maxLength: LedgerCommand.Limits.productId)),
                         keepingEffect: type == 7)
            }
        } else if let voided = try dn.object("voidedPurchaseNotification") {
            notification.notificationType = "voided"
            notification.effect = .refund
            notification.purchaseTokenSha256 = Self.digest(try voided.string("purchaseToken", maxLength: LedgerCommand.Limits.purchaseToken))
            notification.orderId = try voided.string("orderId", maxLength: LedgerCommand.Limits.transactionId)
            notification.refundAt = eventTime
            notification.reason = "voided"
        } else if let oneTime = try dn.object("oneTimeProductNotification") {
            notification.notificationType = "oneTimeProduct"
            let type = try oneTime.int64("notificationType")
            if let type { notification.notificationType = "oneTimeProduct/\(type)" }
            if stores.asksGoogle, type == 1, line.value(["payment"]) == nil {
                // ONE_TIME_PRODUCT_PURCHASED: productsv2 says the order (§6.3).
                let token = try oneTime.string("purchaseToken", maxLength: LedgerCommand.Limits.purchaseToken)
                notification.purchaseTokenSha256 = Self.digest(token)
                Self.ask(&notification, .googleProduct, package: package, token: token,
                         product: ("sku", try oneTime.optionalString("sku", maxLength: LedgerCommand.Limits.productId)))
            }
        }
        return notification
    }

    /// Makes the notification an `ask` (§6.3): recorded with the job that asks the Play Developer
    /// API about its token (the job's secret), named by the push's message id. `keepingEffect`:
    /// the notification's own effect applies too (or is parked until its token is known), and it
    /// is recorded with its job all the same.
    private static func ask(_ notification: inout StoreNotification, _ kind: StoreJob.Kind, package: String, token: String,
                            product: (name: String, value: String?), keepingEffect: Bool = false) {
        if !keepingEffect { notification.effect = .ask }
        notification.job = StoreJob(
            kind: kind, purpose: "notification:GG:\(notification.notificationId)",
            args: ["packageName": package, "notificationId": notification.notificationId,
                   "eventTime": Timestamp(notification.effectiveAt).iso8601Microseconds,
                   "purchaseTokenSha256": notification.purchaseTokenSha256 ?? digest(token),
                   product.name: product.value ?? ""],
            secret: token)
    }

    /// §5.3's table for `subscriptionNotification.notificationType`.
    static func effect(subscriptionType: Int64, hasPayment: Bool) -> StoreNotification.Effect {
        switch subscriptionType {
        case 1, 2, 4: hasPayment ? .payment : .ignored   // RECOVERED, RENEWED, PURCHASED
        case 3: .autoRenewOff                            // CANCELED
        case 7: .autoRenewOn                             // RESTARTED
        case 6: .inGracePeriod                           // IN_GRACE_PERIOD
        case 5: .onHold                                  // ON_HOLD
        case 10: .paused                                 // PAUSED
        case 12: .revokeLatest                           // REVOKED
        case 13: .billingEnded                           // EXPIRED
        default: .ignored
        }
    }

    /// The `payment` the backend attached, with the §2.1 rules: Google Play's store code, the
    /// notification's token unless it gives its own (which must be the same), and the order id
    /// as its paymentSeq unless it names one.
    private func payment(_ line: FieldReader, token: FieldReader, tokenDigest: String) throws(LedgerError) -> String {
        guard let attached = try line.object("payment") else { throw line.invalid("payment", "missing") }
        var object = attached.object
        if attached.value(["storeCode"]) != nil, try attached.store() != .googlePlay {
            throw attached.invalid("storeCode", "must be GG for a Google Play notification")
        }
        object["storeCode"] = .string(StoreCode.googlePlay.rawValue)
        if let given = try attached.optionalString("purchaseToken", "accessToken", maxLength: LedgerCommand.Limits.purchaseToken) {
            guard Self.digest(given) == tokenDigest else {
                throw attached.invalid("purchaseToken", "differs from the notification's purchaseToken")
            }
        } else {
            object["purchaseToken"] = .string(try token.string("purchaseToken", maxLength: LedgerCommand.Limits.purchaseToken))
        }
        if attached.value(["paymentSeq"]) == nil,
           let order = try attached.optionalString("transactionId", "paymentId", "transactionIdentifier", maxLength: LedgerCommand.Limits.transactionId) {
            object["paymentSeq"] = .string(order)
        }
        return try Payment(fields: FieldReader(object, path: "payment."), kind: nil).commandFields()
    }

    static func digest(_ token: String) -> String {
        SHA256.lowercaseHex(of: Array(token.utf8))
    }

    /// Epoch milliseconds given as a JSON string (as Google sends them) or number.
    static func millis(_ fields: FieldReader, _ name: String) throws(LedgerError) -> Date? {
        guard let (_, value) = fields.value([name]) else { return nil }
        if case .string(let text) = value {
            guard let millis = Int64(text), let stamp = Timestamp(checkedEpochMilliseconds: millis) else {
                throw fields.invalid(name, "expected epoch milliseconds, got \"\(text.prefix(40))\"")
            }
            return stamp.date
        }
        return try fields.time(name)
    }

    static func base64(_ text: String) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        return Data(base64Encoded: standard).map(Array.init)
    }

    /// The push body as kept in the log: `message.data` decoded, tokens replaced by their digests.
    static func proof(_ body: JSONObject, _ notification: JSONObject) -> String {
        var kept = notification
        for key in ["subscriptionNotification", "voidedPurchaseNotification", "oneTimeProductNotification"] {
            guard case .object(var inner)? = kept[key], let token = inner["purchaseToken"]?.stringValue else { continue }
            inner["purchaseToken"] = nil
            inner["purchaseTokenSha256"] = .string(digest(token))
            kept[key] = .object(inner)
        }
        var envelope = body
        envelope["type"] = nil
        envelope["payment"] = nil
        if case .object(var message)? = envelope["message"] {
            message["data"] = .object(kept)
            envelope["message"] = .object(message)
        }
        var w = JSONWriter()
        w.value(.object(envelope))
        return w.string
    }
}
