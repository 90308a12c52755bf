import LedgerJSON
import Foundation
import Hummingbird
import LedgerOutput
import PurchaseLedger

/// The contract's queries (docs/contract.md §3.1, §3.2) for roles `reader` and `writer`: the same
/// JSON arrays `ledger unconsumed --json` and `ledger subscriptions --json` print; a user's
/// history, as `ledger history --json` prints it; and one payment by its name, store transaction
/// or order id, or its Google purchase token, with its owner and state (`GET` and `POST /v1/lookup`).
struct QueryRoutes {
    let ledger: Ledger

    func add(to group: RouterGroup<LedgerRequestContext>) {
        group.get("users/{userId}/unconsumed") { request, context in
            let userId = try context.userId()
            let stores = try QueryParameters(request).stores()
            let payments = try await APIError.mappingDatabase { try await ledger.unconsumed(userId: userId, stores: stores) }
            var w = JSONWriter()
            w.beginArray()
            for payment in payments { payment.write(into: &w) }
            w.endArray()
            return Response.json(w.string)
        }
        group.get("users/{userId}/subscriptions") { request, context in
            let userId = try context.userId()
            let query = QueryParameters(request)
            let stores = try query.stores()
            let at = try query.instant("at") ?? Date()
            let includeExpired = try query.flag("includeExpired")
            let subscriptions = try await APIError.mappingDatabase {
                try await ledger.subscriptions(userId: userId, stores: stores, at: at, includeExpired: includeExpired)
            }
            var w = JSONWriter()
            w.beginArray()
            for subscription in subscriptions { subscription.write(into: &w) }
            w.endArray()
            return Response.json(w.string)
        }
        group.get("users/{userId}/history") { request, context in
            let userId = try context.userId()
            let limit = try QueryParameters(request).integer("limit", default: 1000, in: 1...Int64(Ledger.maxHistoryLimit))
            let history = try await APIError.mappingDatabase { try await ledger.history(userId: userId, limit: Int(limit)) }
            var w = JSONWriter()
            history.write(into: &w)
            return Response.json(w.string)
        }
        group.get("lookup") { request, _ in
            try await lookup(Self.paymentKey(QueryParameters(request)))
        }
        // The same lookup with the key in a JSON body: the one way to ask by a purchase token,
        // which a query string would leave in proxies' and access logs.
        group.post("lookup") { request, _ in
            var request = request
            return try await lookup(Self.paymentKey(JSONBody.object(try await request.bytes(upTo: 16 << 10))))
        }
    }

    private func lookup(_ key: PaymentKey) async throws -> Response {
        guard let payment = try await APIError.mappingDatabase({ try await ledger.lookup(key) }) else {
            throw APIError(LedgerError(.notFound, "no payment \(key)"))
        }
        var w = JSONWriter()
        payment.write(into: &w)
        return Response.json(w.string)
    }

    /// The one key `GET /v1/lookup` names
    /// (``PaymentKey/init(paymentSeq:storeCode:transactionId:orderId:purchaseToken:)``). A
    /// purchase token is refused here, unread: it belongs in the body of `POST /v1/lookup`.
    static func paymentKey(_ query: QueryParameters) throws -> PaymentKey {
        if query.parameters.get("purchaseToken") != nil {
            throw APIError.invalid("purchaseToken", "a purchase token is a secret and is never taken in a URL; "
                                   + "send it in the JSON body of POST /v1/lookup")
        }
        return try paymentKey { query.parameters.get($0).map { String($0) } }
    }

    /// The one key the JSON object of `POST /v1/lookup` names: the same fields as the query of
    /// `GET /v1/lookup`, or `purchaseToken`, as strings; no other field.
    static func paymentKey(_ body: JSONObject) throws -> PaymentKey {
        let known = ["paymentSeq", "storeCode", "transactionId", "orderId", "purchaseToken"]
        if let unknown = body.keys.first(where: { !known.contains($0) }) {
            throw APIError.invalid(unknown, "not a lookup field; expected one of \(known.joined(separator: ", "))")
        }
        for (key, value) in body.fields where value.stringValue == nil {
            throw APIError.invalid(key, "expected a string, got \(value.typeName)")
        }
        return try paymentKey { body[$0]?.stringValue }
    }

    private static func paymentKey(_ field: (String) -> String?) throws -> PaymentKey {
        let store = try field("storeCode").map { text -> StoreCode in
            guard let store = StoreCode(rawValue: text) else {
                throw APIError(.badRequest, LedgerError.Code.unknownStore.rawValue, "storeCode: expected AS or GG, got '\(text)'")
            }
            return store
        }
        do {
            return try PaymentKey(paymentSeq: field("paymentSeq"), storeCode: store, transactionId: field("transactionId"),
                                  orderId: field("orderId"), purchaseToken: field("purchaseToken"))
        } catch {
            throw APIError(error)
        }
    }
}
