/// A refusal by the ledger, with exactly the contract's codes and a message that names the
/// field or the payment. A refused command writes nothing.
public struct LedgerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The contract's error codes (docs/contract.md §2.6).
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// Malformed JSON, or a missing or malformed field (the message names it).
        case invalidInput = "INVALID_INPUT"
        /// A store notification whose signature or certificate chain does not verify
        /// (docs/contract.md §5.2); the message names the check that failed.
        case signatureInvalid = "SIGNATURE_INVALID"
        /// A verified store notification for an app (bundle id, package name) or environment
        /// the ledger is not configured to accept (docs/contract.md §5.1).
        case appMismatch = "APP_MISMATCH"
        /// A store other than `AS` or `GG`.
        case unknownStore = "UNKNOWN_STORE"
        /// A product type other than the three the ledger knows.
        case unknownProductType = "UNKNOWN_PRODUCT_TYPE"
        /// The payment or lineage belongs to another user.
        case userInvalid = "USER_INVALID"
        /// The payment or lineage is for another product.
        case productInvalid = "PRODUCT_INVALID"
        /// The payment was recorded with other content, or its store transaction under another payment.
        case paymentConflict = "PAYMENT_CONFLICT"
        /// No such payment or lineage.
        case notFound = "NOT_FOUND"
        /// The purchase token does not match the payment's.
        case tokenInvalid = "TOKEN_INVALID"
        /// The payment is an `AUTO_RENEWABLE` subscription payment.
        case notConsumable = "NOT_CONSUMABLE"
        /// The payment was refunded and never consumed.
        case refunded = "REFUNDED"
    }

    /// The contract's code.
    public var code: Code
    /// What happened, for a person: names the field or the payment.
    public var message: String
    /// The payment the refusal is about, when there is one.
    public var paymentSeq: String?

    public init(_ code: Code, _ message: String, paymentSeq: String? = nil) {
        self.code = code
        self.message = message
        self.paymentSeq = paymentSeq
    }

    public var description: String { "\(code.rawValue): \(message)" }

    static func invalid(_ field: String, _ problem: String) -> LedgerError {
        LedgerError(.invalidInput, "\(field): \(problem)")
    }
}
