import Foundation
import LedgerTestSupport
import Testing

extension LedgerServerTests {
    /// One log line per request, with what an operator needs and nothing a caller sent.
    @Suite("ledger serve: request log")
    struct RequestLogTests {
        @Test func eachRequestLogsOneLineWithItsRoutePatternStatusDurationAndRequestId() async throws {
            try await ServerHarness.with { server in
                let reader = try server.key(.reader)
                let reply = try await server.send("GET", "/v1/users/secret-user-42/unconsumed?store=AS", key: reader,
                                                  headers: ["X-Request-Id": "req-abc.1"])
                #expect(reply.status == 200 && reply.header("X-Request-Id") == "req-abc.1")
                let generated = try await server.send("GET", "/healthz", headers: ["X-Request-Id": "bad id with spaces"])
                let id = try #require(generated.header("X-Request-Id"))
                #expect(id != "bad id with spaces" && !id.isEmpty)
                let nowhere = try await server.send("PURGE", "/nowhere/secret-path")
                #expect(nowhere.status == 404 && nowhere.code == "NO_ROUTE")
                let lines = server.log.all.filter { $0.hasPrefix("info request ") || $0.hasPrefix("error request ") }
                #expect(lines.count == 3)
                let first = try #require(lines.first)
                for field in ["method=GET", "route=/v1/users/{userId}/unconsumed", "status=200", "request_id=req-abc.1", "duration_ms="] {
                    #expect(first.contains(field), "\(field) in \(first)")
                }
                #expect(lines[1].contains("request_id=\(id)"))
                #expect(lines[2].contains("method=OTHER") && lines[2].contains("route=NotFound") && lines[2].contains("status=404"), "\(lines[2])")
                let all = server.log.all.joined(separator: "\n")
                for secret in ["secret-user-42", "secret-path", "store=AS", String(reader.dropFirst(3).prefix(16)), "Bearer"] {
                    #expect(!all.contains(secret), "the log holds \(secret)")
                }
            }
        }
    }
}
