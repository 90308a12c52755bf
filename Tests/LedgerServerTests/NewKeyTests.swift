import Foundation
import LedgerServer
import LedgerTestSupport
import Postgres
import Testing

extension LedgerServerTests {
    /// A key made before a request arrives is known to it, however recently the server read its
    /// keys; unknown keys arriving together share one read.
    @Suite("ledger serve: new keys")
    struct NewKeyTests {
        @Test func aKeyMadeRightAfterTheServerReadItsKeysWorksAtOnce() async throws {
            try await ServerHarness.with({ $0.keyRefreshInterval = .seconds(60) }) { server in
                let first = try server.key(.reader)
                #expect(try await server.send("GET", "/v1/users/u1/unconsumed", key: first).status == 200)
                let second = try server.key(.reader)
                #expect(try await server.send("GET", "/v1/users/u1/unconsumed", key: second).status == 200)
                // And again right after a read an unknown key caused.
                #expect(try await server.send("GET", "/v1/users/u1/unconsumed", key: "lk_unknown").status == 401)
                let third = try server.key(.writer)
                #expect(try await server.send("GET", "/v1/users/u1/unconsumed", key: third).status == 200)
            }
        }

        /// 40 requests with unknown keys at once: each must see the keys as of its arrival, but
        /// they share reads (one in flight, the next shared by all who came meanwhile) rather
        /// than cost one database round trip each. The test database's `ledger.live_api_keys()`
        /// is wrapped to count its calls and take a second, so the requests overlap the reads.
        @Test func unknownKeysArrivingTogetherShareTheirReads() async throws {
            try await ServerHarness.with({ $0.keyRefreshInterval = .seconds(60) }) { server in
                let key = try server.key(.reader)
                try server.database.withConnection { connection in
                    try connection.executeScript(unsafeSQL: """
                        CREATE SEQUENCE ledger.test_key_reads;
                        ALTER FUNCTION ledger.live_api_keys() RENAME TO live_api_keys_counted;
                        CREATE FUNCTION ledger.live_api_keys() RETURNS TABLE (id bigint, role text, key_sha256 bytea)
                        LANGUAGE plpgsql AS $$
                        BEGIN
                            PERFORM nextval('ledger.test_key_reads');
                            PERFORM pg_sleep(1);
                            RETURN QUERY SELECT * FROM ledger.live_api_keys_counted();
                        END $$;
                        """)
                }
                #expect(try await server.send("GET", "/v1/users/u1/unconsumed", key: key).status == 200)
                let reads = "SELECT last_value - (NOT is_called)::int FROM ledger.test_key_reads"
                let before = try server.database.withConnection { try $0.count(reads) }
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for n in 0..<40 {
                        group.addTask { try await server.send("GET", "/v1/users/u1/unconsumed", key: "lk_unknown\(n)").status }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.allSatisfy { $0 == 401 })
                let shared = try server.database.withConnection { try $0.count(reads) } - before
                #expect(shared >= 1 && shared <= 6, "\(shared) reads for 40 unknown keys")
            }
        }
    }
}
