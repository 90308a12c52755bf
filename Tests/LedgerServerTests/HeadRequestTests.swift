import Foundation
import LedgerTestSupport
import Testing

extension LedgerServerTests {
    /// `HEAD /healthz` and `HEAD /readyz`: the status and headers of `GET`, without the body, for
    /// probes that send HEAD.
    @Suite("ledger serve: HEAD on the health routes")
    struct HeadRequestTests {
        @Test func headOnHealthzAndReadyzAnswersLikeGetWithoutABody() async throws {
            try await ServerHarness.with { server in
                for path in ["/healthz", "/readyz"] {
                    let get = try await server.send("GET", path)
                    let head = try await server.send("HEAD", path)
                    #expect(head.status == 200, "HEAD \(path): \(head.status)")
                    #expect(head.text.isEmpty)
                    #expect(head.header("Content-Type") == "application/json")
                    #expect(head.header("Content-Length") == get.header("Content-Length"))
                }
                #expect(server.log.all.contains { $0.contains("method=HEAD") && $0.contains("route=/readyz") && $0.contains("status=200") })
            }
        }

        @Test func headOnReadyzIs503UntilTheDatabaseIsMigrated() async throws {
            try await ServerHarness.with(migrated: false) { server in
                let head = try await server.send("HEAD", "/readyz")
                #expect(head.status == 503 && head.text.isEmpty)
                #expect(try await server.send("HEAD", "/healthz").status == 200)
            }
        }
    }
}
