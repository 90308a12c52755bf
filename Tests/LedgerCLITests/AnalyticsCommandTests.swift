import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// `ledger analytics ...` as a process: every format, the chart, and the usage errors.
///
/// The data (UTC, 2026): P1 AS gem_100 0.99 USD Jan 1 10:00, consumed 10:05, refunded Jan 2 01:00;
/// P4 AS gem_550 4.99 USD Jan 2 00:00, never consumed; P3 AS gem_100 1.10 EUR Jan 2 06:00, sandbox;
/// S1 GG `vip "gold", week` 2.99 USD [Jan 1 12:00, Jan 8 12:00), auto-renew on.
@Suite("ledger analytics, as a process")
struct AnalyticsCommandTests {
    static let product = "vip \"gold\", week"

    static let lines: [String] = [
        #"{"type":"purchase","userId":"u1","storeCode":"AS","productId":"gem_100","productType":"CONSUMABLE","price":"0.99","currency":"USD","paymentSeq":"P1","purchaseToken":"t1","transactionId":"T1","purchaseTime":"2026-01-01T10:00:00Z"}"#,
        #"{"type":"consume","userId":"u1","paymentSeq":"P1","purchaseToken":"t1","time":"2026-01-01T10:05:00Z"}"#,
        #"{"type":"refund","paymentSeq":"P1","time":"2026-01-02T01:00:00Z"}"#,
        #"{"type":"purchase","userId":"u1","storeCode":"AS","productId":"gem_550","productType":"CONSUMABLE","price":"4.99","currency":"USD","paymentSeq":"P4","purchaseToken":"t4","transactionId":"T4","purchaseTime":"2026-01-02T00:00:00Z"}"#,
        #"{"type":"purchase","userId":"u1","storeCode":"AS","productId":"gem_100","productType":"CONSUMABLE","price":"1.10","currency":"EUR","paymentSeq":"P3","purchaseToken":"t3","transactionId":"T3","purchaseTime":"2026-01-02T06:00:00Z","sandboxPayment":true}"#,
        #"{"type":"purchase","userId":"u2","storeCode":"GG","productId":"vip \"gold\", week","productType":"AUTO_RENEWABLE","price":"2.99","currency":"USD","paymentSeq":"S1","purchaseToken":"ts","transactionId":"TS1","purchaseTime":"2026-01-01T12:00:00Z","expiryTime":"2026-01-08T12:00:00Z"}"#,
    ]

    private func withData(_ body: (String) throws -> Void) async throws {
        try await TestDatabase.with { db in
            let ingest = try LedgerProcess.run(["ingest", "--database-url", db.conninfo], input: Self.lines.joined(separator: "\n") + "\n")
            #expect(ingest.status == 0, "\(ingest.stdout)\(ingest.stderr)")
            try body(db.conninfo)
        }
    }

    private func ledger(_ arguments: [String], _ url: String) throws -> LedgerProcess.Output {
        try LedgerProcess.run(["analytics"] + arguments + ["--database-url", url])
    }

    @Test func revenueAsJSONHasIntegerCountsAndExactMoneyStrings() async throws {
        try await withData { url in
            let out = try ledger(["revenue", "--from", "2026-01-01", "--to", "2026-01-03", "--format", "json"], url)
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stdout == """
                [{"period":"2026-01-01","storeCode":"AS","currency":"USD","payments":1,"gross":"0.99","refunds":"0","net":"0.99"},\
                {"period":"2026-01-01","storeCode":"GG","currency":"USD","payments":1,"gross":"2.99","refunds":"0","net":"2.99"},\
                {"period":"2026-01-02","storeCode":"AS","currency":"USD","payments":1,"gross":"4.99","refunds":"0.99","net":"4.00"}]

                """)
            let parsed = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]])
            #expect(parsed[0]["payments"] is Int && parsed[0]["gross"] is String)
            // --json, as every query command takes it, is the same; sandbox only when asked for.
            #expect(try ledger(["revenue", "--from", "2026-01-01", "--to", "2026-01-03", "--json"], url).stdout == out.stdout)
            let sandbox = try ledger(["revenue", "--from", "2026-01-02", "--to", "2026-01-03", "--json", "--include-sandbox"], url)
            #expect(try jsonArray(sandbox.stdout).map { $0["currency"] as? String } == ["EUR", "USD"])
            let month = try ledger(["revenue", "--from", "2026-01-01", "--to", "2026-02-01", "--by", "month", "--store", "AS", "--json"], url)
            #expect(month.stdout == #"[{"period":"2026-01-01","storeCode":"AS","currency":"USD","payments":2,"gross":"5.98","refunds":"0.99","net":"4.99"}]"# + "\n")
            #expect(try ledger(["revenue", "--from", "2025-01-01", "--to", "2025-02-01", "--json"], url).stdout == "[]\n")
        }
    }

    @Test func csvFollowsRFC4180AndTablesAreForPeople() async throws {
        try await withData { url in
            let csv = try ledger(["subscribers", "--from", "2026-01-06", "--to", "2026-01-09", "--format", "csv"], url)
            #expect(csv.status == 0, "\(csv.stderr)")
            // Active at Jan 7 and Jan 8 00:00; not at Jan 9 00:00 (expired Jan 8 12:00).
            #expect(csv.stdout == "period,storeCode,productId,active\r\n"
                    + "2026-01-06,GG,\"vip \"\"gold\"\", week\",1\r\n2026-01-07,GG,\"vip \"\"gold\"\", week\",1\r\n")
            let revenue = try ledger(["revenue", "--from", "2026-01-02", "--to", "2026-01-03", "--format", "csv"], url)
            #expect(revenue.stdout == "period,storeCode,currency,payments,gross,refunds,net\r\n2026-01-02,AS,USD,1,4.99,0.99,4.00\r\n")
            let table = try ledger(["subscribers", "--from", "2026-01-06", "--to", "2026-01-07"], url)
            #expect(table.lines == ["period      storeCode  productId         active",
                                    "----------  ---------  ----------------  ------",
                                    "2026-01-06  GG         \(Self.product)  1"])
            let empty = try ledger(["churn", "--from", "2025-01-01", "--to", "2025-01-02"], url)
            #expect(empty.status == 0 && empty.stdout.hasPrefix("(no subscription activity"))
        }
    }

    @Test func churnRefundsAndBacklogPrintTheirColumns() async throws {
        try await withData { url in
            let churn = try jsonArray(try ledger(["churn", "--from", "2026-01-01", "--to", "2026-02-01", "--by", "month", "--json"], url).stdout)
            #expect(churn.count == 1)
            #expect(churn.first?["productId"] as? String == Self.product)
            #expect(["started", "renewed", "churned", "churnedVoluntary", "churnedInvoluntary", "revoked"].map { churn.first?[$0] as? Int }
                    == [1, 0, 1, 0, 1, 0])
            let refunds = try ledger(["refunds", "--from", "2026-01-01", "--to", "2026-02-01", "--by", "month", "--json"], url)
            #expect(refunds.stdout == #"[{"period":"2026-01-01","storeCode":"AS","currency":"USD","refunds":1,"amount":"0.99","refundsAfterConsume":1,"amountAfterConsume":"0.99"}]"# + "\n")
            let backlog = try ledger(["backlog", "--at", "2026-01-03T12:00:00Z", "--json"], url)
            #expect(backlog.stdout == #"[{"storeCode":"AS","productId":"gem_550","unconsumed":1,"oldestPurchaseTime":"2026-01-02T00:00:00.000Z","medianAgeSeconds":129600,"p95AgeSeconds":129600}]"# + "\n")
            let table = try ledger(["backlog", "--at", "2026-01-03T12:00:00Z", "--store", "AS"], url)
            #expect(table.lines.last == "AS         gem_550    1           2026-01-02T00:00:00.000Z  1d 12:00:00  1d 12:00:00")
            #expect(try ledger(["backlog", "--at", "2026-01-03T12:00:00Z", "--store", "GG", "--json"], url).stdout == "[]\n")
        }
    }

    @Test func plotWritesALineChartPerStoreWithAxesAndLegend() async throws {
        try await withData { url in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("plot-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let subscribers = directory.appendingPathComponent("subscribers.svg").path
            let out = try ledger(["subscribers", "--from", "2026-01-01", "--to", "2026-01-11", "--plot", subscribers, "--json"], url)
            #expect(out.status == 0, "\(out.stderr)")
            let svg = try String(contentsOfFile: subscribers, encoding: .utf8)
            #expect(svg.hasPrefix("<?xml") && svg.hasSuffix("</svg>\n"))
            #expect(svg.contains("Active subscriptions by store, per day") && svg.contains("GG (Google Play)"))
            #expect(svg.contains(">Jan 1<") && svg.contains(">2026<") && svg.contains(">Day (UTC)<"))
            #expect(svg.components(separatedBy: "<polyline").count - 1 == 1)
            // Ten days, one point each: active from the end of Jan 1 to the end of Jan 7.
            #expect(svg.components(separatedBy: "<circle").count - 1 == 10 + 1)

            let revenue = directory.appendingPathComponent("revenue.svg").path
            let money = try ledger(["revenue", "--from", "2026-01-01", "--to", "2026-01-04", "--include-sandbox", "--plot", revenue], url)
            #expect(money.status == 0, "\(money.stderr)")
            let chart = try String(contentsOfFile: revenue, encoding: .utf8)
            // One panel per currency, a line per store in each (GG sold nothing in EUR: a line at zero).
            #expect(chart.contains(">EUR<") && chart.contains(">USD<") && chart.contains("Net revenue (USD)"))
            #expect(chart.components(separatedBy: "<polyline").count - 1 == 4)

            let unwritable = try ledger(["revenue", "--from", "2026-01-01", "--to", "2026-01-04", "--plot", "/nonexistent/dir/x.svg"], url)
            #expect(unwritable.status == 2 && unwritable.stderr.contains("cannot write the chart"))
        }
    }

    /// `ledger rebuild` swaps the projection tables under the views: they must answer the same.
    @Test func analyticsAnswersTheSameAfterARebuildSwapsTheProjections() async throws {
        try await withData { url in
            let reports = [["revenue", "--from", "2026-01-01", "--to", "2026-02-01", "--json"],
                           ["subscribers", "--from", "2026-01-01", "--to", "2026-01-10", "--json"],
                           ["churn", "--from", "2026-01-01", "--to", "2026-02-01", "--json"],
                           ["refunds", "--from", "2026-01-01", "--to", "2026-02-01", "--json"],
                           ["backlog", "--at", "2026-01-03T12:00:00Z", "--json"]]
            let before = try reports.map { try ledger($0, url).stdout }
            let viewsBefore = try viewContents(url)
            let rebuild = try LedgerProcess.run(["rebuild", "--quiet", "--database-url", url])
            #expect(rebuild.status == 0, "\(rebuild.stderr)")
            #expect(try reports.map { try ledger($0, url).stdout } == before)
            #expect(try viewContents(url) == viewsBefore)
        }
    }

    /// Every row of every analytics view but the backlog (which moves with the clock), as text.
    private func viewContents(_ url: String) throws -> [String] {
        let connection = try Connection.connect(ConnectionConfiguration(url))
        defer { connection.close() }
        return try ["revenue_daily", "active_subscriptions_daily", "churn_daily", "refunds_daily"].flatMap { view in
            try connection.query(SQL(unsafeSQL: "SELECT v::text AS line FROM analytics.\(view) v ORDER BY 1")).map {
                view + " " + (try $0.decode("line", as: String.self))
            }
        }
    }

    @Test(arguments: [
        (["revenue", "--from", "2026-02-30", "--to", "2026-03-01"], "--from"),
        (["revenue", "--from", "2026-03-01", "--to", "2026-03-01"], "--to"),
        (["subscribers", "--from", "2026-01-01", "--to", "2026-02-01", "--by", "week"], "--by"),
        (["churn", "--from", "2026-01-01"], "--to"),
        (["refunds", "--from", "2026-01-01", "--to", "2026-02-01", "--json", "--format", "csv"], "--json"),
        (["backlog", "--at", "yesterday"], "--at"),
        (["revenue", "--from", "2026-01-01", "--to", "2026-02-01", "--store", "XX"], "--store"),
    ])
    func usageErrorsExitTwoWithAOneLineReason(arguments: [String], naming: String) async throws {
        let out = try LedgerProcess.run(["analytics"] + arguments + ["--database-url", "host=/nonexistent dbname=x"])
        #expect(out.status == 2)
        #expect(out.stderr.split(separator: "\n").count == 1 && out.stderr.contains(naming), "\(out.stderr)")
        #expect(out.stdout.isEmpty)
    }

    private func jsonArray(_ text: String) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
    }
}
