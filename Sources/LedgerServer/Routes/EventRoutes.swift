import Foundation
import HTTPTypes
import Hummingbird
import LedgerJSON
import LedgerOutput
import PurchaseLedger
import ServiceLifecycle

/// `GET /v1/events?after=CURSOR&limit=N&wait=SECONDS` for roles `reader` and `writer`: the log
/// in the catch-up reader's gap-free order (``Ledger/events(after:limit:wait:)``), so that a
/// backend in any language can follow it. `after` is the `cursor` of the previous page (0, the
/// default, is the start; on one server a cursor is one position, the page's `next`); when no event is final yet the request waits up to `wait` seconds
/// (default 0) and answers an empty page when the time is up. A waiting request holds no
/// database connection between its looks; one whose client hangs up stops waiting.
struct EventRoutes {
    let ledger: Ledger
    let metrics: ServerMetrics

    func add(to group: RouterGroup<LedgerRequestContext>) {
        group.get("events") { request, context in
            let query = QueryParameters(request)
            let after = try query.cursor("after")
            let limit = try query.integer("limit", default: 100, in: 1...Int64(Ledger.maxEventPage))
            let wait = try query.integer("wait", default: 0, in: 0...Ledger.maxEventWait.components.seconds)
            let ledger = ledger, metrics = metrics
            let page: EventPage
            do {
                page = try await cancelWhenGracefulShutdown {
                    try await APIError.mappingDatabase {
                        try await HangUpHandler.cancellingOnHangUp(context.channel) {
                            try await metrics.waitingForEvents(wait > 0) {
                                try await ledger.events(after: after, limit: Int(limit), wait: .seconds(wait))
                            }
                        }
                    }
                }
            } catch let error as LedgerError {
                throw APIError(error)
            } catch is CancellationError where Task.isShuttingDownGracefully {
                // The server is stopping: a waiting request answers now instead of holding the
                // shutdown for the rest of its wait. It was cancelled while it waited, after a look
                // that found nothing, so nothing it read is dropped.
                page = EventPage(events: [], cursor: after)
            } catch is CancellationError {
                throw APIError(HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request"), "CLIENT_CLOSED",
                               "the client closed the connection while it waited for events")
            }
            var w = JSONWriter()
            page.write(into: &w)
            return Response.json(w.string)
        }
    }
}
