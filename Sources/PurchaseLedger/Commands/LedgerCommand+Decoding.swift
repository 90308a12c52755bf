import Foundation
import LedgerJSON

extension LedgerCommand {
    /// The limits of docs/contract.md §2.1, from the field rules the database checks too
    /// (`Schema/definitions/rules/field_rules.json`).
    enum Limits {
        static let userId = FieldRules.payment("userId").maxLength!
        static let productId = FieldRules.payment("productId").maxLength!
        static let paymentSeq = FieldRules.payment("paymentSeq").maxLength!
        static let purchaseToken = FieldRules.payment("purchaseToken").maxLength!
        static let transactionId = FieldRules.payment("transactionId").maxLength!
        static let reason = FieldRules.command("reason").maxLength!
        static let appAccountToken = FieldRules.command("appAccountToken").maxLength!
    }

    /// Checks a user ID given outside a command (the command line's `--user`) by the contract's
    /// rule: 1 to 128 characters, no U+0000. The `INVALID_INPUT` error names `field` and never
    /// repeats the value.
    public static func validateUserId(_ userId: String, field: String = "userId") throws(LedgerError) {
        if let problem = FieldReader.textProblem(userId, maxLength: Limits.userId) {
            throw LedgerError.invalid(field, problem)
        }
    }

    /// Decodes one NDJSON line: a JSON object with a `type`. Store notifications are verified
    /// against `stores` (docs/contract.md §5).
    public init(line: some Collection<UInt8>, stores: StoreConfiguration = .none) throws(LedgerError) {
        try self.init(json: try Self.parse(line), stores: stores)
    }

    /// Parses one line as JSON; `INVALID_INPUT` when it is not.
    static func parse(_ line: some Collection<UInt8>) throws(LedgerError) -> JSONValue {
        do {
            return try JSONParser.parse(Array(line))
        } catch {
            throw LedgerError(.invalidInput, "malformed JSON: \(error)")
        }
    }

    /// Decodes a store's own webhook body, exactly as Apple (`{"signedPayload":…}`) or Pub/Sub
    /// (`{"message":…,"subscription":…}`) posts it, for a caller that authenticated the store and
    /// not a writer: `POST /notifications/…` and ``Ledger/receiveStoreNotification(_:)``.
    /// `store` is the store the route is for (nil: either, by the body's shape).
    ///
    /// Only what the store sends is taken. A `payment`, which docs/contract.md §5.3 lets a writer's
    /// ingest line attach to a Google notification (the backend's reading of the Play Developer
    /// API), is refused: the stores never send one, and a push credential would otherwise record
    /// any payment for any user. A `type` other than the store's notification is refused too.
    public init(storeNotificationBody json: JSONValue, from store: StoreCode? = nil,
                stores: StoreConfiguration = .none) throws(LedgerError) {
        guard case .object(var object) = json else {
            throw LedgerError(.invalidInput, "expected a JSON object, got \(json.typeName)")
        }
        if object["payment"] != nil {
            throw LedgerError.invalid("payment", "a store's notification carries none; attach one only on a writer's line (ledger ingest, POST /v1/batch)")
        }
        let expected: String
        switch store {
        case .appStore?: expected = "appleNotification"
        case .googlePlay?: expected = "googleNotification"
        case nil: expected = object["signedPayload"] != nil ? "appleNotification" : "googleNotification"
        }
        if let given = object["type"] {
            guard given.stringValue == expected else {
                throw LedgerError.invalid("type", "expected \(expected) or none, got \(given.stringValue.map { "\"\($0.prefix(40))\"" } ?? given.typeName)")
            }
        }
        object["type"] = .string(expected)
        try self.init(json: .object(object), stores: stores)
    }

    /// Decodes one command from JSON, accepting the TOAST and Gamebase field names. A line
    /// without `type` that holds Apple's `signedPayload` or a Pub/Sub push `message` is that
    /// store's notification, exactly as the store posts it.
    public init(json: JSONValue, stores: StoreConfiguration = .none) throws(LedgerError) {
        guard case .object(let object) = json else {
            throw LedgerError(.invalidInput, "expected a JSON object, got \(json.typeName)")
        }
        let fields = FieldReader(object)
        let type: String
        if fields.value(["type"]) == nil, object["signedPayload"] != nil {
            type = "appleNotification"
        } else if fields.value(["type"]) == nil, object["message"] != nil {
            type = "googleNotification"
        } else {
            type = try fields.string("type", maxLength: 32)
        }
        switch type {
        case "purchase", "renewal":
            let kind: PaymentKind = type == "renewal" ? .renewal : .purchase
            let payment = try Payment(fields: fields, kind: kind)
            try SignedTransactionCheck.check(payment, line: fields, stores: stores)
            self = .record(payment, kind: kind)
        case "consume":
            self = .consume(
                paymentSeq: try fields.string("paymentSeq", maxLength: Limits.paymentSeq),
                userId: try fields.string("userId", "userID", maxLength: Limits.userId),
                purchaseToken: try fields.optionalString("purchaseToken", "accessToken", maxLength: Limits.purchaseToken),
                time: try fields.time("time"))
        case "refund":
            self = .refund(
                paymentSeq: try fields.string("paymentSeq", maxLength: Limits.paymentSeq),
                time: try fields.time("time"),
                reason: try fields.optionalString("reason", maxLength: Limits.reason))
        case "cancel":
            self = .cancel(
                storeCode: try fields.store(),
                originalTransactionId: try fields.string(
                    "originalTransactionId", "originalPaymentId", "originalTransactionIdentifier",
                    maxLength: Limits.transactionId),
                time: try fields.time("time"))
        case "restore":
            self = try LedgerCommand.restore(fields)
        case "appleNotification":
            self = .notification(try AppleNotificationDecoder(stores: stores).decode(fields))
        case "googleNotification":
            self = .notification(try GoogleNotificationDecoder(stores: stores).decode(fields))
        case "product":
            self = .product(
                storeCode: try fields.store(),
                productId: try fields.string("productId", "gamebaseProductId", "productIdentifier", maxLength: Limits.productId),
                productType: try fields.productType(),
                price: fields.value(["price"]) == nil ? nil : try fields.price(),
                currency: fields.value(["currency"]) == nil ? nil : try fields.currency())
            if case .product(_, _, _, let price, let currency) = self, (price == nil) != (currency == nil) {
                throw fields.invalid(price == nil ? "price" : "currency", "missing: a product's price needs its currency")
            }
        case "accountLink":
            self = .accountLink(
                userId: try fields.string("userId", "userID", maxLength: Limits.userId),
                storeCode: try fields.store(),
                appAccountToken: try fields.string("appAccountToken", "obfuscatedAccountId", "obfuscatedExternalAccountId",
                                                   maxLength: Limits.appAccountToken))
        default:
            throw fields.invalid("type", "unknown command \"\(type.prefix(40))\" (expected purchase, renewal, consume, restore, refund, cancel, product, accountLink, appleNotification or googleNotification)")
        }
    }

    private static func restore(_ fields: FieldReader) throws(LedgerError) -> LedgerCommand {
        let userId = try fields.string("userId", "userID", maxLength: Limits.userId)
        let store = try fields.store()
        let time = try fields.time("time")
        guard let (name, list) = fields.value(["purchases"]) else { throw fields.invalid("purchases", "missing") }
        guard case .array(let items) = list else {
            throw fields.invalid(name, "expected an array, got \(list.typeName)")
        }
        var purchases: [Payment] = []
        purchases.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            let path = "purchases[\(index)]"
            guard case .object(var object) = item else {
                throw LedgerError.invalid(path, "expected an object, got \(item.typeName)")
            }
            let itemFields = FieldReader(object, path: path + ".")
            if let given = try itemFields.optionalString("userId", "userID", maxLength: Limits.userId), given != userId {
                throw itemFields.invalid("userId", "must equal the restore's userId")
            }
            if itemFields.value(["storeCode"]) != nil, try itemFields.store() != store {
                throw itemFields.invalid("storeCode", "must equal the restore's storeCode")
            }
            object["userId"] = .string(userId)
            object["storeCode"] = .string(store.rawValue)
            let payment = try Payment(fields: FieldReader(object, path: path + "."), kind: nil)
            purchases.append(payment)
        }
        return .restore(userId: userId, storeCode: store, time: time, purchases: purchases)
    }
}

extension Payment {
    /// Decodes a purchase or renewal by the payment rules (`FieldRules.payment`: names, aliases,
    /// limits); `kind` nil (a restored item) accepts either.
    init(fields: FieldReader, kind: PaymentKind?) throws(LedgerError) {
        let rule = FieldRules.payment(_:)
        let userId = try fields.string(rule("userId"))
        let store = try fields.store(rule("storeCode"))
        let productId = try fields.string(rule("productId"))
        let productType = try fields.productType()
        let price = try fields.price()
        let currency = try fields.currency()
        let paymentSeq = try fields.string(rule("paymentSeq"))
        let token = try fields.string(rule("purchaseToken"))
        let transactionId = try fields.string(rule("transactionId"))
        let original = try fields.optionalString(rule("originalTransactionId"))
        if kind == .renewal, original == nil {
            throw fields.invalid("originalTransactionId", "required on a renewal")
        }
        guard let purchaseTime = try fields.time("purchaseTime") else {
            throw fields.invalid("purchaseTime", "missing")
        }
        let expiryTime = try fields.time("expiryTime", zeroIsAbsent: !productType.isSubscription)
        if productType.isSubscription {
            guard let expiryTime else {
                throw fields.invalid("expiryTime", "required for a \(productType.rawValue) payment")
            }
            guard expiryTime > purchaseTime else {
                throw fields.invalid("expiryTime", "must be later than purchaseTime")
            }
        } else if expiryTime != nil {
            throw fields.invalid("expiryTime", "must be absent, null or 0 for a CONSUMABLE payment")
        }
        self.init(
            userId: userId, storeCode: store, productId: productId, productType: productType,
            price: price, currency: currency, paymentSeq: paymentSeq, purchaseToken: token,
            transactionId: transactionId, originalTransactionId: original, purchaseTime: purchaseTime,
            expiryTime: expiryTime,
            payload: try fields.rawString(rule("payload")),
            sandboxPayment: try fields.bool(rule("sandboxPayment")),
            promotionPayment: try fields.bool(rule("promotionPayment")),
            productSeq: try fields.int64(rule("productSeq")))
    }
}
