import Foundation
import LedgerJSON

/// A `signedTransaction` on an App Store `purchase` or `renewal` line (docs/contract.md §6.4): the
/// app's StoreKit 2 transaction, verified as a notification's `signedTransactionInfo` is (the
/// chain to a trusted root, Apple's OIDs, an accepted bundle id and environment), and agreeing
/// with the line on `transactionId`, `originalTransactionId`, `productId`, `purchaseDate` and
/// `expiresDate`. Any failure is `SIGNATURE_INVALID` naming the check; nothing is written.
enum SignedTransactionCheck {
    static func check(_ payment: Payment, line fields: FieldReader, stores: StoreConfiguration) throws(LedgerError) {
        guard payment.storeCode == .appStore else { return }
        guard let jws = try fields.optionalString("signedTransaction", maxLength: 1 << 20) else {
            if stores.requiresSignedTransactions {
                throw LedgerError(.signatureInvalid,
                    "signedTransaction: missing, and App Store payments must carry one (LEDGER_APPLE_REQUIRE_SIGNED_TRANSACTIONS is on)")
            }
            return
        }
        let verified: VerifiedJWS
        do {
            verified = try AppleSignedDataVerifier(roots: stores.appleRoots).verify(jws, field: "signedTransaction")
        } catch let error as LedgerError {
            throw LedgerError(.signatureInvalid, error.message)
        } catch {
            throw LedgerError(.signatureInvalid, "signedTransaction: \(error)")
        }
        let t = FieldReader(verified.payload, path: "signedTransaction.")
        func refuse(_ field: String, _ problem: String) -> LedgerError {
            LedgerError(.signatureInvalid, "signedTransaction.\(field): \(problem)")
        }
        let bundle = try t.optionalString("bundleId", maxLength: 255)
        guard let bundle, stores.appleBundleIds.contains(bundle) else {
            throw refuse("bundleId", "\(bundle.map { "\"\($0)\"" } ?? "missing"), not an accepted bundle id (LEDGER_APPLE_BUNDLE_IDS)")
        }
        let environment = try t.optionalString("environment", maxLength: 64)
        guard let environment, stores.appleEnvironments.contains(environment) else {
            throw refuse("environment", "\(environment.map { "\"\($0)\"" } ?? "missing"), not an accepted environment (LEDGER_APPLE_ENVIRONMENTS)")
        }
        func same(_ field: String, _ signed: String?, _ line: String, _ lineField: String) throws(LedgerError) {
            guard signed == line else {
                throw refuse(field, "\(signed.map { "\"\($0)\"" } ?? "missing") differs from the line's \(lineField) \"\(line)\"")
            }
        }
        let transaction = try t.optionalString("transactionId", maxLength: LedgerCommand.Limits.transactionId)
        try same("transactionId", transaction, payment.transactionId, "transactionId")
        let original = try t.optionalString("originalTransactionId", maxLength: LedgerCommand.Limits.transactionId) ?? transaction
        try same("originalTransactionId", original, payment.originalTransactionId ?? payment.transactionId, "originalTransactionId")
        try same("productId", try t.optionalString("productId", maxLength: LedgerCommand.Limits.productId), payment.productId, "productId")
        func sameTime(_ field: String, _ signed: Date?, _ line: Date?, _ lineField: String) throws(LedgerError) {
            let agree = switch (signed, line) {
            case (nil, nil): true
            case let (a?, b?): abs(a.timeIntervalSince(b)) < 0.001
            default: false
            }
            guard agree else {
                let show = { (date: Date?) in date.map { Timestamp($0).iso8601Microseconds } ?? "none" }
                throw refuse(field, "\(show(signed)) differs from the line's \(lineField) \(show(line))")
            }
        }
        try sameTime("purchaseDate", try t.time("purchaseDate"), payment.purchaseTime, "purchaseTime")
        try sameTime("expiresDate", try t.time("expiresDate"), payment.expiryTime, "expiryTime")
    }
}
