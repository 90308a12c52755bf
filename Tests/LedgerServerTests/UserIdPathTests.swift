import Foundation
import LedgerTestSupport
import Testing

extension LedgerServerTests {
    /// `GET /v1/users/{userId}/…` with user ids that must be percent-encoded in a path: each is
    /// decoded once and finds the purchases recorded for that user.
    @Suite("ledger serve: user ids in the path")
    struct UserIdPathTests {
        /// Ids a path cannot carry as they are, and the contract's limit (128 Unicode scalars:
        /// here 64 letters with a combining accent each, 64 characters).
        static let ids = ["a b", "a/b", "100%", "a?b", "a#b", "joão", "명수", "u+1", "%41", "a%2Fb",
                          String(repeating: "e\u{301}", count: 64)]

        /// Every byte but the unreserved ASCII ones as `%XX` (RFC 3986), so the server must decode.
        static func encoded(_ id: String) -> String {
            id.utf8.map { byte in
                let unreserved = (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                    || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
                return unreserved ? String(UnicodeScalar(byte)) : String(format: "%%%02X", byte)
            }.joined()
        }

        static func lines(for id: String, _ n: Int) -> [String] {
            let user = String(data: try! JSONSerialization.data(withJSONObject: id, options: .fragmentsAllowed), encoding: .utf8)!
            return [
                Fixture.purchaseLine(["userId": user, "paymentSeq": "\"P-\(n)\"", "transactionId": "\"T-\(n)\"",
                                      "purchaseToken": "\"tok-\(n)\""]),
                Fixture.purchaseLine(["userId": user, "paymentSeq": "\"S-\(n)\"", "transactionId": "\"ST-\(n)\"",
                                      "purchaseToken": "\"stok-\(n)\"", "productId": "\"vip\"",
                                      "productType": "\"AUTO_RENEWABLE\"", "expiryTime": "\"2026-02-01T00:00:00Z\""]),
            ]
        }

        static func get(_ server: ServerHarness, _ path: String, key: String) async throws -> RawResponse {
            let connection = try RawConnection.open(port: server.port)
            #expect(await connection.send("GET \(path) HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(key)\r\nConnection: close\r\n\r\n"))
            return try await connection.response()
        }

        @Test func eachRouteFindsTheUserWhoseIdNeedsEscaping() async throws {
            try await ServerHarness.with { server in
                let lines = Self.ids.enumerated().flatMap { Self.lines(for: $1, $0) } + Self.lines(for: "u1", 99)
                let outcomes = try server.database.withConnection { try $0.ingest(lines) }
                #expect(outcomes.allSatisfy { $0.status == .recorded })
                let reader = try server.key(.reader)
                for (n, id) in Self.ids.enumerated() {
                    let path = "/v1/users/\(Self.encoded(id))"
                    let unconsumed = try await Self.get(server, path + "/unconsumed", key: reader)
                    #expect(unconsumed.status == 200 && unconsumed.body.contains("\"paymentSeq\":\"P-\(n)\""), "\(id): \(unconsumed.body)")
                    let subscriptions = try await Self.get(server, path + "/subscriptions?at=2026-01-15T00:00:00Z", key: reader)
                    #expect(subscriptions.status == 200 && subscriptions.body.contains("\"latestPaymentSeq\":\"S-\(n)\""), "\(id): \(subscriptions.body)")
                    let history = try await Self.get(server, path + "/history", key: reader)
                    #expect(history.status == 200 && history.body.contains("\"paymentSeq\":\"P-\(n)\""), "\(id): \(history.body)")
                }
                // Decoded once: `u%31` is `u1`, and `%2541` is the id `%41`, not `A`.
                let u1 = try await Self.get(server, "/v1/users/u%31/unconsumed", key: reader)
                #expect(u1.body.contains("\"paymentSeq\":\"P-99\""))
                let literal = try await Self.get(server, "/v1/users/%2541/unconsumed", key: reader)
                #expect(literal.body.contains("\"paymentSeq\":\"P-8\""), "\(literal.body)")
                // An empty id matches no route.
                let empty = try await Self.get(server, "/v1/users//unconsumed", key: reader)
                #expect(empty.status == 404 && empty.json["code"] as? String == "NO_ROUTE", "\(empty.status) \(empty.body)")
            }
        }

        @Test(arguments: [
            "%zz", "%", "a%2", "%C3%28", "%00", Self.encoded(String(repeating: "e\u{301}", count: 64) + "x"),
            Self.encoded(String(repeating: "x", count: 129)),
        ])
        func anIdTheContractRefusesIs400NamingUserId(id: String) async throws {
            try await ServerHarness.with { server in
                let reader = try server.key(.reader)
                for route in ["unconsumed", "subscriptions", "history"] {
                    let reply = try await Self.get(server, "/v1/users/\(id)/\(route)", key: reader)
                    #expect(reply.status == 400 && reply.json["code"] as? String == "INVALID_INPUT", "\(id) \(route): \(reply.status) \(reply.body)")
                    #expect((reply.json["message"] as? String)?.hasPrefix("userId:") == true, "\(reply.body)")
                }
            }
        }
    }
}
