import Foundation
import LedgerTestSupport
import Testing

extension LedgerServerTests {
    /// `GET /console/` and its files (no key: the page holds no data), and the reports' charts
    /// the console's dashboard shows (`Accept: image/svg+xml`, reader key). The page in a real
    /// browser is `scripts/browser-test`'s part.
    @Suite("ledger serve: the console")
    struct ConsoleRouteTests {
        static let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/LedgerServer/Console").standardizedFileURL

        @Test func thePageIsServedWithoutAKeyUnderAStrictContentSecurityPolicy() async throws {
            try await ServerHarness.with { server in
                let page = try await server.send("GET", "/console/")
                #expect(page.status == 200)
                #expect(page.header("Content-Type") == "text/html; charset=utf-8")
                #expect(page.text == (try String(contentsOf: Self.source.appendingPathComponent("index.html"), encoding: .utf8)))
                let policy = try #require(page.header("Content-Security-Policy"))
                #expect(policy.contains("default-src 'self'") && policy.contains("script-src 'self'"))
                #expect(policy.contains("img-src 'self' data:") && policy.contains("frame-ancestors 'none'"))
                #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"))
                #expect(page.header("X-Content-Type-Options") == "nosniff")
                #expect(page.header("Cache-Control") == "no-cache")
                // No inline script: the policy would refuse it, so the page must not need it.
                #expect(!page.text.contains("<script>") && page.text.contains("<script src=\"/console/console.js\""))

                let etag = try #require(page.header("ETag"))
                let again = try await server.send("GET", "/console/", headers: ["If-None-Match": etag])
                #expect(again.status == 304 && again.text.isEmpty)
            }
        }

        @Test func theBareNameRedirectsToThePage() async throws {
            try await ServerHarness.with { server in
                // Over a socket of its own: URLSession would follow the redirect.
                let connection = try RawConnection.open(port: server.port)
                #expect(connection.sendAll("GET /console HTTP/1.1\r\nHost: localhost\r\n\r\n"))
                let bare = try await connection.response()
                #expect(bare.status == 308 && bare.headers["location"] == "/console/")
                connection.clear()
                #expect(connection.sendAll("GET /console/ HTTP/1.1\r\nHost: localhost\r\n\r\n"))
                let page = try await connection.response()
                #expect(page.status == 200 && page.body.contains("PurchaseLedger console"))
            }
        }

        @Test(arguments: [("console.css", "text/css; charset=utf-8"), ("console.js", "text/javascript; charset=utf-8")])
        func assetsAreServedWithTheirTypes(name: String, type: String) async throws {
            try await ServerHarness.with { server in
                let asset = try await server.send("GET", "/console/\(name)")
                #expect(asset.status == 200)
                #expect(asset.header("Content-Type") == type)
                #expect(asset.header("X-Content-Type-Options") == "nosniff")
                #expect(asset.text == (try String(contentsOf: Self.source.appendingPathComponent(name), encoding: .utf8)))
            }
        }

        @Test func anUnknownFileIsNotFound() async throws {
            try await ServerHarness.with { server in
                for uri in ["/console/nope.js", "/console/..%2Fopenapi.json", "/console/index.html.bak"] {
                    let reply = try await server.send("GET", uri)
                    #expect(reply.status == 404, "\(uri)")
                    #expect(reply.code == "NOT_FOUND" || reply.code == "NO_ROUTE", "\(uri)")
                }
            }
        }

        /// The backlog's chart names its products; one with markup in its id comes out as text.
        @Test func aChartIsSVGWithItsTextsEscaped() async throws {
            try await ServerHarness.with { server in
                let product = "<script>&\"x"
                try server.database.withConnection {
                    _ = try $0.ingest([Fixture.purchaseLine(["productId": "\"<script>&\\\"x\""])])
                }
                let reader = try server.key(.reader)
                let backlog = try await server.send("GET", "/v1/analytics/backlog?at=2026-02-01T00:00:00Z", key: reader,
                                                    headers: ["Accept": "image/svg+xml"])
                #expect(backlog.status == 200)
                #expect(backlog.header("Content-Type") == "image/svg+xml; charset=utf-8")
                #expect(backlog.text.hasPrefix("<?xml") && backlog.text.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""))
                #expect(backlog.text.contains(">&lt;script&gt;&amp;&quot;x</text>"))
                #expect(!backlog.text.contains(product) && !backlog.text.contains("<script"))
                #expect(backlog.text.contains("<circle"))

                let revenue = try await server.send("GET", "/v1/analytics/revenue?from=2026-01-01&to=2026-01-08", key: reader,
                                                    headers: ["Accept": "image/svg+xml"])
                #expect(revenue.status == 200 && revenue.header("Content-Type") == "image/svg+xml; charset=utf-8")
                #expect(revenue.text.contains("<polyline") && revenue.text.contains("Net revenue (USD)"))
                // The JSON answer is unchanged when the chart is not asked for.
                let json = try await server.send("GET", "/v1/analytics/revenue?from=2026-01-01&to=2026-01-08", key: reader)
                #expect(json.header("Content-Type") == "application/json" && json.array.count == 1)
            }
        }

        @Test func aChartNeedsAReaderKeyAndKeepsTheReportsLimits() async throws {
            try await ServerHarness.with { server in
                let svg = ["Accept": "image/svg+xml"]
                let none = try await server.send("GET", "/v1/analytics/churn?from=2026-01-01&to=2026-02-01", headers: svg)
                #expect(none.status == 401 && none.code == "UNAUTHORIZED")
                let reader = try server.key(.reader)
                for report in ["revenue", "subscribers", "churn", "refunds"] {
                    let drawn = try await server.send("GET", "/v1/analytics/\(report)?from=2026-01-01&to=2026-03-01&by=month",
                                                      key: reader, headers: svg)
                    #expect(drawn.status == 200 && drawn.text.contains("</svg>"), "\(report)")
                }
                let tooLong = try await server.send("GET", "/v1/analytics/revenue?from=2000-01-01&to=2026-01-01", key: reader,
                                                    headers: svg)
                #expect(tooLong.status == 400 && tooLong.code == "INVALID_INPUT")
            }
        }
    }
}
