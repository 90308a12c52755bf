import Foundation
import LedgerServer
import LedgerTestSupport
import Postgres
import Testing

extension LedgerServerTests {
    /// Bearer API keys and the role of each route; a refused request writes nothing.
    @Suite("ledger serve: API keys and roles")
    struct APIKeyTests {
        static let purchase = Fixture.purchaseLine(["type": nil])

        @Test func aCommandWithoutAKeyIs401AndWritesNothing() async throws {
            try await ServerHarness.with { server in
                let before = try server.snapshot()
                let reply = try await server.send("POST", "/v1/purchases", body: Self.purchase)
                #expect(reply.status == 401 && reply.code == "UNAUTHORIZED")
                #expect(reply.header("WWW-Authenticate") == "Bearer")
                #expect(try server.snapshot() == before)
            }
        }

        @Test(arguments: ["lk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "not-a-key", ""])
        func anUnknownKeyIs401AndWritesNothing(key: String) async throws {
            try await ServerHarness.with { server in
                _ = try server.key(.writer)
                let before = try server.snapshot()
                let reply = try await server.send("POST", "/v1/purchases", key: key, body: Self.purchase)
                #expect(reply.status == 401 && reply.code == "UNAUTHORIZED")
                #expect(try server.snapshot() == before)
            }
        }

        @Test(arguments: [APIKeyRole.reader, .notifications])
        func aKeyOfAnotherRoleIs403AndWritesNothing(role: APIKeyRole) async throws {
            try await ServerHarness.with { server in
                let key = try server.key(role)
                let before = try server.snapshot()
                let reply = try await server.send("POST", "/v1/purchases", key: key, body: Self.purchase)
                #expect(reply.status == 403 && reply.code == "FORBIDDEN")
                #expect(reply.message.contains(role.rawValue))
                #expect(try server.snapshot() == before)
            }
        }

        @Test func readerAndWriterKeysQueryButANotificationsKeyDoesNot() async throws {
            try await ServerHarness.with { server in
                for role in [APIKeyRole.reader, .writer] {
                    let key = try server.key(role)
                    #expect(try await server.send("GET", "/v1/users/u1/unconsumed", key: key).status == 200)
                }
                let notifications = try server.key(.notifications)
                #expect(try await server.send("GET", "/v1/users/u1/unconsumed", key: notifications).status == 403)
                #expect(try await server.send("GET", "/v1/users/u1/unconsumed").status == 401)
            }
        }

        @Test func aRevokedKeyStopsWorking() async throws {
            try await ServerHarness.with { server in
                let (id, key) = try server.database.withConnection { try $0.addAPIKey(role: .writer) }
                #expect(try await server.send("POST", "/v1/purchases", key: key, body: Self.purchase).status == 200)
                #expect(try server.database.withConnection { try $0.revokeAPIKey(id: id) })
                #expect(try server.database.withConnection { try $0.revokeAPIKey(id: id) } == false)
                let before = try server.snapshot()
                let reply = try await server.send("POST", "/v1/refunds", key: key, body: #"{"paymentSeq":"P-1"}"#)
                #expect(reply.status == 401)
                #expect(try server.snapshot() == before)
            }
        }

        @Test func aNewKeyWorksWithinASecondWhileTheOthersAreCached() async throws {
            try await ServerHarness.with({ $0.keyRefreshInterval = .seconds(60) }) { server in
                let first = try server.key(.reader)
                #expect(try await server.send("GET", "/v1/users/u1/unconsumed", key: first).status == 200)
                try await Task.sleep(for: .milliseconds(1100))
                let second = try server.key(.reader)
                #expect(try await server.send("GET", "/v1/users/u1/unconsumed", key: second).status == 200)
            }
        }

        @Test func keysAreStoredOnlyAsDigestsAndNeverLogged() async throws {
            try await ServerHarness.with { server in
                let key = try server.key(.writer)
                _ = try await server.send("POST", "/v1/purchases", key: key, body: Self.purchase)
                _ = try await server.send("POST", "/v1/purchases", key: key + "x", body: Self.purchase)
                let stored = try server.database.withConnection { c in
                    try c.query("SELECT role, encode(key_sha256, 'hex') AS digest FROM ledger.api_keys")[0].decode("digest", as: String.self)
                }
                let expected = APIKey.digest(key).map { String(format: "%02x", $0) }.joined()
                #expect(stored == expected)
                let dump = try server.database.withConnection { c in
                    try c.query("SELECT string_agg(k::text, ',') AS t FROM ledger.api_keys k")[0].decode("t", as: String.self)
                }
                #expect(!dump.contains(key))
                let log = server.log.all.joined(separator: "\n")
                #expect(log.contains("route=/v1/purchases"))
                #expect(!log.contains(String(key.dropFirst(3).prefix(12))))
                #expect(!log.contains("tok-1"))
            }
        }

        @Test func aKeyIsComparedByItsWholeDigest() {
            let a = APIKey.digest("lk_a"), b = APIKey.digest("lk_b")
            #expect(APIKey.constantTimeEqual(a, a))
            #expect(!APIKey.constantTimeEqual(a, b))
            #expect(!APIKey.constantTimeEqual(a, Array(a.dropLast())))
            var lastByte = a
            lastByte[31] ^= 1
            #expect(!APIKey.constantTimeEqual(a, lastByte))
            #expect(APIKey.generate() != APIKey.generate())
            #expect(APIKey.generate().hasPrefix("lk_") && APIKey.generate().count == 46)
        }
    }
}
