import Foundation
import LedgerJSON

/// Verifies an App Store Server Notification V2 and says what it does (docs/contract.md §5.2):
/// the signed payload and its nested transaction and renewal info are verified first
/// (`SIGNATURE_INVALID` names the failed check), then the app and environment (`APP_MISMATCH`).
/// Duplicates, owners and parking are the database's to decide (`ledger.notify`).
struct AppleNotificationDecoder {
    let stores: StoreConfiguration

    init(stores: StoreConfiguration) {
        self.stores = stores
    }

    func decode(_ line: FieldReader) throws(LedgerError) -> StoreNotification {
        let signedPayload = try line.string("signedPayload", maxLength: 1 << 20)
        let signed = try Self.verifySignatures(signedPayload, roots: stores.appleRoots)
        let (payload, transaction) = (signed.payload, signed.transaction)
        try checkApp(data: signed.data, transaction: transaction)

        let type = try payload.string("notificationType", maxLength: 64)
        let subtype = try payload.optionalString("subtype", maxLength: 64)
        guard let signedDate = try payload.time("signedDate") else { throw payload.invalid("signedDate", "missing") }
        var notification = StoreNotification(
            storeCode: .appStore,
            notificationId: try payload.string("notificationUUID", maxLength: 128),
            notificationType: subtype.map { "\(type)/\($0)" } ?? type,
            effect: Self.effect(type: type, subtype: subtype),
            effectiveAt: signedDate,
            proof: Self.proof(signedPayload))
        if type == "CONSUMPTION_REQUEST", stores.answersConsumptionRequests {
            // Its job calls the App Store Server API of this app and environment.
            notification.effect = .consumptionRequest
            notification.environment = try signed.data?.optionalString("environment", maxLength: 64)
            notification.bundleId = try signed.data?.optionalString("bundleId", maxLength: 255)
        }
        guard notification.effect != .ignored else { return notification }
        guard let transaction else {
            throw LedgerError.invalid("signedPayload.data.signedTransactionInfo", "missing: a \(type) notification names its transaction")
        }
        let storeType = try transaction.optionalString("type", maxLength: 64)
        switch storeType {
        case "Consumable": notification.storeProductType = "consumable"
        case "Auto-Renewable Subscription": notification.storeProductType = "subscription"
        default:
            notification.effect = .ignored  // non-consumables and non-renewing subscriptions are not the ledger's
            return notification
        }
        let transactionId = try transaction.string("transactionId", maxLength: LedgerCommand.Limits.transactionId)
        notification.transactionId = transactionId
        notification.originalTransactionId = try transaction.optionalString(
            "originalTransactionId", maxLength: LedgerCommand.Limits.transactionId) ?? transactionId
        notification.appAccountToken = try transaction.optionalString("appAccountToken", maxLength: LedgerCommand.Limits.appAccountToken)
        if notification.effect != .consumptionRequest {
            notification.payment = try Self.payment(transaction, subscription: notification.storeProductType == "subscription",
                                                    required: notification.effect == .payment)
        }
        switch notification.effect {
        case .refund, .revoke:
            notification.refundAt = try transaction.time("revocationDate") ?? signedDate
            if let reason = try transaction.int64("revocationReason") {
                notification.reason = notification.effect == .revoke ? "revoked" : "refund (revocationReason \(reason))"
            } else {
                notification.reason = notification.effect == .revoke ? "revoked" : "refund"
            }
        case .extend:
            guard let expiry = try transaction.time("expiresDate") else {
                throw transaction.invalid("expiresDate", "missing on a RENEWAL_EXTENDED notification")
            }
            notification.expiryTime = expiry
        case .inGracePeriod:
            notification.gracePeriodExpiresAt = try signed.renewal?.time("gracePeriodExpiresDate")
        default:
            break
        }
        return notification
    }

    /// A signed payload whose signatures hold: its decoded parts.
    struct SignedParts {
        var payload: FieldReader
        var data: FieldReader?
        var transaction: FieldReader?
        var renewal: FieldReader?
    }

    /// Every signature check of §5.2, and nothing that depends on the configured apps: the
    /// outer JWS, the nested `signedTransactionInfo` and `signedRenewalInfo`, and their
    /// `originalTransactionId`s agreeing. Receiving a notification runs it before anything is
    /// written; `ledger verify --signatures` (``StoredSignatureAudit``) runs it again on what
    /// was kept.
    static func verifySignatures(_ signedPayload: String, roots: AppleRootCertificates) throws(LedgerError) -> SignedParts {
        let verifier = AppleSignedDataVerifier(roots: roots)
        let outer = try verify(verifier, signedPayload, field: "signedPayload")
        let payload = FieldReader(outer.payload, path: "signedPayload.")
        let data = try payload.object("data")
        var transaction: FieldReader?
        var renewal: FieldReader?
        if let data {
            if let jws = try data.optionalString("signedTransactionInfo", maxLength: 1 << 20) {
                let field = "signedPayload.data.signedTransactionInfo"
                transaction = FieldReader(try verify(verifier, jws, field: field).payload, path: field + ".")
            }
            if let jws = try data.optionalString("signedRenewalInfo", maxLength: 1 << 20) {
                let field = "signedPayload.data.signedRenewalInfo"
                renewal = FieldReader(try verify(verifier, jws, field: field).payload, path: field + ".")
            }
        }
        if let transaction, let renewal {
            let a = try transaction.optionalString("originalTransactionId", maxLength: LedgerCommand.Limits.transactionId)
            let b = try renewal.optionalString("originalTransactionId", maxLength: LedgerCommand.Limits.transactionId)
            if a != b {
                throw LedgerError(.signatureInvalid,
                    "signedPayload.data: the transaction's originalTransactionId \(a ?? "(none)") and the renewal info's \(b ?? "(none)") disagree")
            }
        }
        return SignedParts(payload: payload, data: data, transaction: transaction, renewal: renewal)
    }

    private static func verify(_ verifier: AppleSignedDataVerifier, _ jws: String, field: String) throws(LedgerError) -> VerifiedJWS {
        do {
            return try verifier.verify(jws, field: field)
        } catch let error as LedgerError {
            throw error
        } catch {
            throw LedgerError(.signatureInvalid, "\(field): \(error)")
        }
    }

    /// `APP_MISMATCH` unless the notification's and the transaction's bundle id and environment are accepted.
    private func checkApp(data: FieldReader?, transaction: FieldReader?) throws(LedgerError) {
        for (reader, label) in [(data, "signedPayload.data"), (transaction, "signedPayload.data.signedTransactionInfo")] {
            guard let reader else { continue }
            let bundle = try reader.optionalString("bundleId", maxLength: 255)
            if label == "signedPayload.data" || bundle != nil {
                guard let bundle, stores.appleBundleIds.contains(bundle) else {
                    throw LedgerError(.appMismatch,
                        "\(label).bundleId: \(bundle.map { "\"\($0)\"" } ?? "missing"), not an accepted bundle id (LEDGER_APPLE_BUNDLE_IDS)")
                }
            }
            let environment = try reader.optionalString("environment", maxLength: 64)
            if label == "signedPayload.data" || environment != nil {
                guard let environment, stores.appleEnvironments.contains(environment) else {
                    throw LedgerError(.appMismatch,
                        "\(label).environment: \(environment.map { "\"\($0)\"" } ?? "missing"), not an accepted environment (LEDGER_APPLE_ENVIRONMENTS: \(stores.appleEnvironments.sorted().joined(separator: ",")))")
                }
            }
        }
    }

    /// The ledger's effect of a notification type and subtype (docs/contract.md §5.2's table).
    static func effect(type: String, subtype: String?) -> StoreNotification.Effect {
        switch (type, subtype) {
        case ("SUBSCRIBED", _), ("DID_RENEW", _), ("OFFER_REDEEMED", _), ("ONE_TIME_CHARGE", _): .payment
        case ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"): .autoRenewOff
        case ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED"): .autoRenewOn
        case ("DID_FAIL_TO_RENEW", "GRACE_PERIOD"): .inGracePeriod
        case ("DID_FAIL_TO_RENEW", _), ("GRACE_PERIOD_EXPIRED", _): .billingRetry
        case ("EXPIRED", _): .billingEnded
        case ("REFUND", _): .refund
        case ("REFUND_REVERSED", _): .refundReversed
        case ("REVOKE", _): .revoke
        case ("RENEWAL_EXTENDED", _): .extend
        default: .ignored
        }
    }

    /// The transaction as the §2.1 command fields of a payment, without the fields the ledger
    /// decides (userId, productType, paymentSeq); nil when it carries no price and none is needed.
    static func payment(_ t: FieldReader, subscription: Bool, required: Bool) throws(LedgerError) -> String? {
        guard t.value(["price"]) != nil, t.value(["currency"]) != nil else {
            if required { throw t.invalid("price", "missing: the payment cannot be recorded without its price and currency") }
            return nil
        }
        guard let milli = try t.int64("price"), milli >= 0 else {
            throw t.invalid("price", "expected a whole number of milli-units, at least 0")
        }
        guard let purchase = try t.time("purchaseDate") else { throw t.invalid("purchaseDate", "missing") }
        let expiry = subscription ? try t.time("expiresDate") : nil
        if subscription {
            guard let expiry else { throw t.invalid("expiresDate", "missing on a subscription transaction") }
            guard expiry > purchase else { throw t.invalid("expiresDate", "must be later than purchaseDate") }
        }
        let transactionId = try t.string("transactionId", maxLength: LedgerCommand.Limits.transactionId)
        var w = JSONWriter()
        w.beginObject()
        w.field("storeCode", StoreCode.appStore.rawValue)
        w.field("productId", try t.string("productId", maxLength: LedgerCommand.Limits.productId))
        w.field("price", priceText(milliUnits: milli))
        w.field("currency", try t.currency())
        w.field("transactionId", transactionId)
        w.field("originalTransactionId", try t.optionalString("originalTransactionId", maxLength: LedgerCommand.Limits.transactionId) ?? transactionId)
        w.field("purchaseTime", Timestamp(purchase).iso8601Microseconds)
        w.field("expiryTime", expiry.map { Timestamp($0).iso8601Microseconds })
        w.field("payload", nil as String?)
        w.field("sandboxPayment", try t.optionalString("environment", maxLength: 64) == "Sandbox")
        w.field("promotionPayment", false)
        w.key("productSeq")
        w.null()
        w.endObject()
        return w.string
    }

    /// Apple's price in milli-units as an exact decimal without trailing zeros: 990 → 0.99, 120000 → 120.
    static func priceText(milliUnits: Int64) -> String {
        let whole = milliUnits / 1000
        var fraction = String(milliUnits % 1000)
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return fraction.isEmpty ? String(whole) : "\(whole).\(fraction)"
    }

    static func proof(_ signedPayload: String) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.field("signedPayload", signedPayload)
        w.endObject()
        return w.string
    }
}

extension FieldReader {
    /// A nested object, or nil when absent or null.
    func object(_ name: String) throws(LedgerError) -> FieldReader? {
        guard let (name, value) = value([name]) else { return nil }
        guard case .object(let object) = value else { throw invalid(name, "expected an object, got \(value.typeName)") }
        return FieldReader(object, path: field(name) + ".")
    }
}
