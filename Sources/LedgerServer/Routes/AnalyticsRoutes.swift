import Foundation
import HTTPTypes
import Hummingbird
import LedgerOutput
import Postgres
import PurchaseLedger

/// `GET /v1/analytics/{revenue,subscribers,churn,refunds}?from=&to=&by=&store=&includeSandbox=`
/// and `GET /v1/analytics/backlog?at=&store=&includeSandbox=` (docs/contract.md §3.4): the reports
/// of `ledger analytics`, as a JSON array, RFC 4180 CSV when `Accept` asks for `text/csv`, or the
/// report's chart as SVG when it asks for `image/svg+xml` (``AnalyticsChart``, the code behind
/// `ledger analytics ... --plot`; the console's dashboard shows these).
///
/// A range over ``AnalyticsLimits`` is 400 `INVALID_INPUT` naming the parameter before the
/// database is asked; a report past the report timeout is 504 `TIMEOUT`; a report whose client
/// hangs up is cancelled on the database (logged as 499, which nobody receives).
struct AnalyticsRoutes {
    let ledger: Ledger

    func add(to group: RouterGroup<LedgerRequestContext>) {
        group.get("analytics/revenue") { request, context in
            try await answer(request, context, { try await $0.revenue($1) }, chart: AnalyticsChart.revenue)
        }
        group.get("analytics/subscribers") { request, context in
            try await answer(request, context, { try await $0.subscribers($1) }, chart: AnalyticsChart.subscribers)
        }
        group.get("analytics/churn") { request, context in
            try await answer(request, context, { try await $0.churn($1) }, chart: AnalyticsChart.churn)
        }
        group.get("analytics/refunds") { request, context in
            try await answer(request, context, { try await $0.refunds($1) }, chart: AnalyticsChart.refunds)
        }
        group.get("analytics/backlog") { request, context in
            let parameters = QueryParameters(request)
            let at = try parameters.instant("at") ?? Date()
            let stores = try parameters.stores()
            let sandbox = try parameters.flag("includeSandbox")
            let ledger = ledger
            let rows = try await Self.running(context) {
                try await ledger.backlog(at: at, stores: stores, includeSandbox: sandbox)
            }
            if Self.wantsChart(request) {
                return Self.svg(AnalyticsChart.backlog(rows, at: at, stores: stores, includeSandbox: sandbox))
            }
            return Self.response(AnalyticsReport(rows), request)
        }
    }

    /// Reads the range parameters first (400 before the database is asked), then runs the report,
    /// and for a chart also the range's periods (those without rows are drawn as zero).
    private func answer<Row: AnalyticsRow>(
        _ request: Request, _ context: LedgerRequestContext,
        _ report: @escaping @Sendable (Ledger, AnalyticsQuery) async throws -> [Row],
        chart: @escaping @Sendable ([Row], [CalendarDay], AnalyticsQuery) -> LineChart
    ) async throws -> Response {
        let query = try Self.query(request)
        let ledger = ledger
        guard Self.wantsChart(request) else {
            return Self.response(AnalyticsReport(try await Self.running(context) { try await report(ledger, query) }), request)
        }
        let (rows, periods) = try await Self.running(context) {
            (try await report(ledger, query), try await ledger.periods(query))
        }
        return Self.svg(chart(rows, periods, query))
    }

    /// Runs a report, cancelled when the client hangs up, with the library's refusals as answers.
    private static func running<T: Sendable>(_ context: LedgerRequestContext,
                                             _ report: @escaping @Sendable () async throws -> T) async throws -> T {
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

    /// Whether `Accept` asks for the chart (`image/svg+xml`), before CSV and JSON.
    static func wantsChart(_ request: Request) -> Bool {
        request.headers[.accept]?.contains("image/svg+xml") == true
    }

    /// The chart as a standalone SVG document. Every text in it is escaped by ``LineChart``; the
    /// console inserts it into its page as an inline `<svg>`.
    static func svg(_ chart: LineChart) -> Response {
        Response(status: .ok, headers: [.contentType: "image/svg+xml; charset=utf-8"],
                 body: .init(byteBuffer: ByteBuffer(string: chart.svg())))
    }
}
