import LedgerJSON

/// A call to a store the ledger must make (docs/contract.md §6.2), as it is written beside the
/// event that needs it: its kind, its purpose (one job per purpose, so a replayed notification adds
/// none), its arguments, and the purchase token the call needs (kept in the job only, cleared
/// when it is done).
public struct StoreJob: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// GET `purchases.subscriptionsv2` for a token; records the payment the answer describes.
        case googleSubscription = "google.subscription"
        /// GET `purchases.productsv2` for a token; records the one-time purchase.
        case googleProduct = "google.product"
        /// GET `purchases.subscriptionsv2` or `purchases.productsv2` for the token of a payment an
        /// SDK line recorded: acknowledges it (a follow-up job) when the answer says pending;
        /// records nothing else.
        case googleCheck = "google.check"
        /// POST `…:acknowledge` for a purchase whose answer said it was not acknowledged.
        case googleAcknowledge = "google.acknowledge"
        /// PUT Send Consumption Information for Apple's CONSUMPTION_REQUEST.
        case appleConsumption = "apple.consumption"
        /// POST of one event or entitlement change to a webhook endpoint (README, "Webhooks"):
        /// the one job kind that is not a call to a store, run by the same mechanism.
        case webhookDelivery = "webhook.delivery"

        /// The kinds that call a store's API.
        public static let storeKinds: Set<Kind> = Set(allCases).subtracting([.webhookDelivery])

        /// The store whose API the job calls (nil for a webhook delivery).
        public var store: StoreCode? {
            switch self {
            case .appleConsumption: .appStore
            case .googleSubscription, .googleProduct, .googleCheck, .googleAcknowledge: .googlePlay
            case .webhookDelivery: nil
            }
        }
    }

    public var kind: Kind
    public var purpose: String
    /// Plain facts, never secrets: package name, product, notification id and time.
    public var args: [String: String]
    public var secret: String?

    public init(kind: Kind, purpose: String, args: [String: String], secret: String? = nil) {
        self.kind = kind
        self.purpose = purpose
        self.args = args
        self.secret = secret
    }

    /// `{"kind", "purpose", "args", "secret"}`, as `ledger.notify` and `ledger.finish_job` take it.
    func write(into w: inout JSONWriter) {
        w.beginObject()
        w.field("kind", kind.rawValue)
        w.field("purpose", purpose)
        w.key("args")
        w.beginObject()
        for (key, value) in args.sorted(by: { $0.key < $1.key }) { w.field(key, value) }
        w.endObject()
        if let secret { w.field("secret", secret) }
        w.endObject()
    }
}

extension StoreJob: CustomStringConvertible {
    /// Never shows the secret.
    public var description: String { "\(kind.rawValue) \(purpose)" }
}
