import Foundation
import HTTPTypes
import Hummingbird
import LedgerOutput
import Postgres
import PurchaseLedger

/// `GET /v1/analytics/{revenue,subscribers,churn,refunds}?from=&to=&by=&store=&includeSandbox=`
/// and `GET /v1/analytics/backlog?at=&store=&includeSandbox=` (docs/contract.md §3.4): the reports
/// of `ledger analytics`, as a JSON array, or RFC 4180 CSV when `Accept` asks for `text/csv`.
///
/// A range over ``AnalyticsLimits`` is 400 `INVALID_INPUT` naming the parameter before the
/// database is asked; a report past the report timeout is 504 `TIMEOUT`; a report whose client
/// hangs up is cancelled on the database (logged as 499, which nobody receives).
struct AnalyticsRoutes {
    let ledger: Ledger

    func add(to group: RouterGroup<LedgerRequestContext>) {
        group.get("analytics/revenue") { request, context in
            try await answer(request, context) { ledger, query in AnalyticsReport(try await ledger.revenue(query)) }
        }
        group.get("analytics/subscribers") { request, context in
            try await answer(request, context) { ledger, query in AnalyticsReport(try await ledger.subscribers(query)) }
        }
        group.get("analytics/churn") { request, context in
            try await answer(request, context) { ledger, query in AnalyticsReport(try await ledger.churn(query)) }
        }
        group.get("analytics/refunds") { request, context in
            try await answer(request, context) { ledger, query in AnalyticsReport(try await ledger.refunds(query)) }
        }
        group.get("analytics/backlog") { request, context in
            let parameters = QueryParameters(request)
            let at = try parameters.instant("at") ?? Date()
            let stores = try parameters.stores()
            let sandbox = try parameters.flag("includeSandbox")
            let ledger = ledger
            let report = try await Self.running(context) {
                AnalyticsReport(try await ledger.backlog(at: at, stores: stores, includeSandbox: sandbox))
            }
            return Self.response(report, request)
        }
    }

    /// Reads the range parameters first (400 before the database is asked), then runs the report.
    private func answer(_ request: Request, _ context: LedgerRequestContext,
                        _ report: @escaping @Sendable (Ledger, AnalyticsQuery) async throws -> AnalyticsReport)
        async throws -> Response {
        let query = try Self.query(request)
        let ledger = ledger
        let result = try await Self.running(context) { try await report(ledger, query) }
        return Self.response(result, request)
    }

    /// Runs a report, cancelled when the client hangs up, with the library's refusals as answers.
    private static func running(_ context: LedgerRequestContext,
                                _ report: @escaping @Sendable () async throws -> AnalyticsReport) async throws -> AnalyticsReport {
        do {
            return try await APIError.mappingDatabase {
                try await HangUpHandler.cancellingOnHangUp(context.channel, report)
            }
        } catch let error as LedgerError {
            throw APIError(error)
        } catch let error as ReportTimeoutError {
            throw APIError(.gatewayTimeout, "TIMEOUT", error.description)
        } catch is CancellationError {
            throw APIError(HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request"), "CLIENT_CLOSED",
                           "the client closed the connection; the report was cancelled")
        }
    }

    static func query(_ request: Request) throws -> AnalyticsQuery {
        let parameters = QueryParameters(request)
        let from = try parameters.day("from")
        let to = try parameters.day("to")
        guard from < to else { throw APIError.invalid("to", "must be later than from (\(from)): to is exclusive") }
        var by = AnalyticsPeriod.day
        if let text = parameters.parameters.get("by") {
            guard let period = AnalyticsPeriod(rawValue: String(text)) else {
                throw APIError.invalid("by", "expected day or month, got '\(text)'")
            }
            by = period
        }
        let query = AnalyticsQuery(from: from, to: to, by: by, stores: try parameters.stores(),
                                   includeSandbox: try parameters.flag("includeSandbox"))
        if let refusal = AnalyticsLimits.refusal(query) { throw APIError.invalid(refusal.field, refusal.problem) }
        return query
    }

    static func response(_ report: AnalyticsReport, _ request: Request) -> Response {
        if request.headers[.accept]?.contains("text/csv") == true {
            return Response(status: .ok, headers: [.contentType: "text/csv; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: report.csv)))
        }
        return .json(report.json)
    }
}
