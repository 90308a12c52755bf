import LedgerJSON
import Foundation
import Hummingbird
import LedgerOutput
import PurchaseLedger

/// The contract's queries (docs/contract.md §3.1, §3.2) for roles `reader` and `writer`: the same
/// JSON arrays `ledger unconsumed --json` and `ledger subscriptions --json` print; a user's
/// history, as `ledger history --json` prints it; and one payment by its name, store transaction
/// or order id, with its owner and state (`GET /v1/lookup`).
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
            let key = try Self.paymentKey(QueryParameters(request))
            guard let payment = try await APIError.mappingDatabase({ try await ledger.lookup(key) }) else {
                throw APIError(LedgerError(.notFound, "no payment \(key)"))
            }
            var w = JSONWriter()
            payment.write(into: &w)
            return Response.json(w.string)
        }
    }

    /// The one key `GET /v1/lookup` names (``PaymentKey/init(paymentSeq:storeCode:transactionId:orderId:)``).
    static func paymentKey(_ query: QueryParameters) throws -> PaymentKey {
        let store = try query.parameters.get("storeCode").map { text -> StoreCode in
            guard let store = StoreCode(rawValue: String(text)) else {
                throw APIError(.badRequest, LedgerError.Code.unknownStore.rawValue, "storeCode: expected AS or GG, got '\(text)'")
            }
            return store
        }
        do {
            return try PaymentKey(paymentSeq: query.parameters.get("paymentSeq").map { String($0) }, storeCode: store,
                                  transactionId: query.parameters.get("transactionId").map { String($0) },
                                  orderId: query.parameters.get("orderId").map { String($0) })
        } catch {
            throw APIError(error)
        }
    }
}
