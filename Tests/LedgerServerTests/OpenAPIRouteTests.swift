import Foundation
import LedgerServer
import LedgerTestSupport
import Testing

extension LedgerServerTests {
    /// `GET /openapi.json` and the document kept in the repository. (That every answer matches
    /// the document is schemathesis's part: `scripts/schemathesis`, run by `scripts/dev test`.)
    @Suite("ledger serve: the OpenAPI document")
    struct OpenAPIRouteTests {
        static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/LedgerServer/openapi.json").standardizedFileURL

        @Test func theServedDocumentIsTheRepositorysFileAndSaysOpenAPI31() async throws {
            try await ServerHarness.with { server in
                let reply = try await server.send("GET", "/openapi.json")
                #expect(reply.status == 200)
                #expect(reply.header("Content-Type") == "application/json")
                #expect(reply.text == (try String(contentsOf: Self.file, encoding: .utf8)))
                #expect(reply.json["openapi"] as? String == "3.1.0")
            }
        }

        /// Each documented operation is a route of the server: without a key or a body it is
        /// refused by its own checks (400, 401 or 503 when the database is needed), never
        /// answered `NO_ROUTE`; and the key-protected ones ask for a key.
        @Test func everyDocumentedOperationIsARouteOfTheServer() async throws {
            let document = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.file)) as! [String: Any]
            let paths = document["paths"] as! [String: [String: Any]]
            #expect(paths.count >= 20)
            // (path, method, whether only an API key is accepted)
            let operations: [(String, String, Bool)] = paths.sorted { $0.key < $1.key }.flatMap { path, operations in
                operations.map { method, operation in
                    let security = (operation as! [String: Any])["security"] as? [[String: Any]]
                    return (path, method, security == nil || (security?.count == 1 && security?.first?["apiKey"] != nil))
                }
            }
            try await ServerHarness.with { server in
                for (path, method, keyOnly) in operations {
                    let uri = path.replacingOccurrences(of: "{userId}", with: "u1")
                    let reply = try await server.send(method.uppercased(), uri, body: method == "post" ? "" : nil)
                    #expect(reply.status != 404 || reply.code != "NO_ROUTE", "\(method) \(path)")
                    if keyOnly {
                        #expect(reply.status == 401, "\(method) \(path) without a key answered \(reply.status)")
                    }
                }
                #expect(try await server.send("GET", "/v1/nothing-here").code == "NO_ROUTE")
            }
        }
    }
}
