import Foundation
import LedgerTestSupport
import Testing

extension LedgerServerTests {
    /// Requests the HTTP/1.1 parser refuses before any route sees them: answered 400 with the
    /// same `{"code","message"}` body as every other refusal, then the connection closes.
    @Suite("ledger serve: requests the HTTP parser refuses")
    struct ParserRefusalTests {
        static let manyHeaders = (0..<1100).map { "X-H\($0): 1\r\n" }.joined()
        static let hugeHeader = "X-Huge: " + String(repeating: "a", count: 100 * 1024) + "\r\n"

        @Test(arguments: [
            ("POST /v1/purchases HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n", "Content-Length"),
            ("POST /v1/purchases HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", "Content-Length"),
            ("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\(Self.manyHeaders)\r\n", "headers"),
            ("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\(Self.hugeHeader)\r\n", "headers"),
            ("FROB /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n", "method"),
            ("POST /notifications/apple HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "Transfer-Encoding"),
        ])
        func aRequestTheParserRefusesIs400InJSON(request: String, field: String) async throws {
            try await ServerHarness.with { server in
                let before = try server.snapshot()
                let connection = try RawConnection.open(port: server.port)
                _ = await connection.send(request)
                let answer = try await connection.response()
                #expect(answer.status == 400)
                #expect(answer.headers["content-type"] == "application/json", "\(answer.headers)")
                #expect(answer.json["code"] as? String == "INVALID_INPUT", "\(answer.body)")
                #expect((answer.json["message"] as? String)?.hasPrefix(field) == true, "\(answer.body)")
                #expect(await connection.waitForClose(timeout: 5).closed)
                #expect(try server.snapshot() == before)
                if request.hasPrefix("POST /notifications/apple") {
                    // Refused while the route read the body: its log line says 400, not 500.
                    #expect(server.log.all.contains { $0.contains("route=/notifications/apple") && $0.contains("status=400") })
                }
            }
        }
    }
}
