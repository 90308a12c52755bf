import Foundation
import HTTPTypes
import Hummingbird
import LedgerOutput
import Postgres
import PurchaseLedger

/// `GET /v1/analytics/{revenue,subscribers,churn,refunds}?from=&to=&by=&store=&includeSandbox=`
/// and `GET /v1/analytics/backlog?at=&store=&includeSandbox=` (CONTRACT.md §3.4): the reports of
/// `ledger analytics`, as a JSON array, or RFC 4180 CSV when `Accept` asks for `text/csv`.
struct AnalyticsRoutes {
    let ledger: Ledger

    func add(to group: RouterGroup<LedgerRequestContext>) {
        group.get("analytics/revenue") { request, _ in
            try await answer(request) { ledger, query in AnalyticsReport(try await ledger.revenue(query)) }
        }
        group.get("analytics/subscribers") { request, _ in
            try await answer(request) { ledger, query in AnalyticsReport(try await ledger.subscribers(query)) }
        }
        group.get("analytics/churn") { request, _ in
            try await answer(request) { ledger, query in AnalyticsReport(try await ledger.churn(query)) }
        }
        group.get("analytics/refunds") { request, _ in
            try await answer(request) { ledger, query in AnalyticsReport(try await ledger.refunds(query)) }
        }
        group.get("analytics/backlog") { request, _ in
            let parameters = QueryParameters(request)
            let at = try parameters.instant("at") ?? Date()
            let stores = try parameters.stores()
            let sandbox = try parameters.flag("includeSandbox")
            let report = try await APIError.mappingDatabase {
                AnalyticsReport(try await ledger.backlog(at: at, stores: stores, includeSandbox: sandbox))
            }
            return Self.response(report, request)
        }
    }

    /// Reads the range parameters first (400 before the database is asked), then runs the report.
    private func answer(_ request: Request,
                        _ report: @Sendable (Ledger, AnalyticsQuery) async throws -> AnalyticsReport)
        async throws -> Response {
        let query = try Self.query(request)
        let result = try await APIError.mappingDatabase { try await report(ledger, query) }
        return Self.response(result, request)
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
        return AnalyticsQuery(from: from, to: to, by: by, stores: try parameters.stores(),
                              includeSandbox: try parameters.flag("includeSandbox"))
    }

    static func response(_ report: AnalyticsReport, _ request: Request) -> Response {
        if request.headers[.accept]?.contains("text/csv") == true {
            return Response(status: .ok, headers: [.contentType: "text/csv; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: report.csv)))
        }
        return .json(report.json)
    }
}
