import LedgerJSON
import Foundation
import Hummingbird
import LedgerOutput
import PurchaseLedger

/// The contract's queries (docs/contract.md §3.1, §3.2) for roles `reader` and `writer`: the same
/// JSON arrays `ledger unconsumed --json` and `ledger subscriptions --json` print.
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
    }
}
