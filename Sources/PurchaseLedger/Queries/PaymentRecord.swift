import Crypto
import Foundation

/// One payment as the ledger holds it, whatever its state: what a support agent or a backend
/// asks about an order, a transaction id or a purchase token (``Ledger/lookup(_:)``, `/v1/lookup`).
/// Never its purchase token.
public struct PaymentRecord: Sendable, Hashable {
    /// Its fields, as `ledger unconsumed` lists a payment (the type is named for that list). Its
    /// `expiryTime` is the later one a store extended it to, when one did.
    public var payment: UnconsumedPayment
    /// `purchase` or `renewal`.
    public var kind: String
    /// Whether it was first learned from a store notification (no SDK line has named it with a
    /// token yet) rather than from the backend.
    public var fromStore: Bool
    public var recordedAt: Date
    public var consumedAt: Date?
    public var refundedAt: Date?
    public var refundReason: String?
}

/// How to find a payment (``Ledger/lookup(_:)``).
public enum PaymentKey: Sendable, Hashable, CustomStringConvertible {
    /// Its `paymentSeq`, or an alias of it (the name an SDK line gave a payment first learned
    /// from a store notification).
    case paymentSeq(String)
    /// The store's transaction id (for Google Play, the order id `GPA.…`).
    case transaction(StoreCode, String)
    /// A Google Play purchase token, held as its SHA-256 digest (lowercase hex) as the ledger
    /// keeps tokens. A subscription's renewals share their token: it names the latest of them.
    case googlePurchaseToken(sha256: String)

    /// The one key a request names (`GET` and `POST /v1/lookup`, `ledger lookup`): `paymentSeq`
    /// alone; `storeCode` and `transactionId`; `orderId`, Google Play's order id, which is its
    /// transaction id; or `purchaseToken`, a Google Play purchase token (for both, `storeCode`,
    /// when given, says `GG`). Each id has 1 to 255 characters, a token 1 to 4096. Throws
    /// `INVALID_INPUT` naming the field when the key is missing, incomplete or mixed; no message
    /// holds the token.
    public init(paymentSeq: String?, storeCode: StoreCode?, transactionId: String?, orderId: String?,
                purchaseToken: String? = nil) throws(LedgerError) {
        for (name, value) in [("paymentSeq", paymentSeq), ("transactionId", transactionId), ("orderId", orderId)] {
            if let value, value.isEmpty || value.unicodeScalars.count > 255 {
                throw LedgerError.invalid(name, "expected 1 to 255 characters")
            }
        }
        if let purchaseToken {
            guard (1...4096).contains(purchaseToken.unicodeScalars.count) else {
                throw LedgerError.invalid("purchaseToken", "expected 1 to 4096 characters")
            }
            guard paymentSeq == nil, transactionId == nil, orderId == nil else {
                throw LedgerError.invalid("purchaseToken", "ask by one of paymentSeq, transactionId, orderId or purchaseToken")
            }
            guard storeCode == nil || storeCode == .googlePlay else {
                throw LedgerError.invalid("storeCode", "purchase tokens are looked up for Google Play (GG); "
                                          + "an App Store payment is found by its transactionId")
            }
            self = .googlePurchaseToken(sha256: SHA256.lowercaseHex(of: Array(purchaseToken.utf8)))
            return
        }
        switch (paymentSeq, transactionId, orderId) {
        case (let seq?, nil, nil):
            guard storeCode == nil else {
                throw LedgerError.invalid("storeCode", "not asked with paymentSeq, which names one payment")
            }
            self = .paymentSeq(seq)
        case (nil, let transaction?, nil):
            guard let storeCode else { throw LedgerError.invalid("storeCode", "required with transactionId: AS or GG") }
            self = .transaction(storeCode, transaction)
        case (nil, nil, let order?):
            guard storeCode == nil || storeCode == .googlePlay else {
                throw LedgerError.invalid("storeCode", "an orderId is Google Play's (GG)")
            }
            self = .transaction(.googlePlay, order)
        case (nil, nil, nil):
            throw LedgerError.invalid("paymentSeq", "required: paymentSeq, storeCode and transactionId, orderId, "
                                      + "or purchaseToken")
        default:
            throw LedgerError.invalid(paymentSeq != nil ? "paymentSeq" : "transactionId",
                                      "ask by one of paymentSeq, transactionId, orderId or purchaseToken")
        }
    }

    /// The payment as a message names it: `P-1`, or `with transactionId T-1 on store AS`.
    public var description: String {
        switch self {
        case .paymentSeq(let seq): seq
        case .transaction(let store, let transaction): "with transactionId \(transaction) on store \(store.rawValue)"
        case .googlePurchaseToken: "with the given purchase token on store GG"
        }
    }
}
