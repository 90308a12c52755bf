import Foundation
import LedgerServer
import LedgerTestSupport
import Testing

extension LedgerServerTests {
    /// `GET /healthz`, `/readyz` and `/metrics`.
    @Suite("ledger serve: health, readiness, metrics")
    struct HealthRouteTests {
        @Test func healthzAnswersWithoutAKey() async throws {
            try await ServerHarness.with { server in
                let reply = try await server.send("GET", "/healthz")
                #expect(reply.status == 200)
                #expect(reply.json["status"] as? String == "ok")
            }
        }

        @Test func readyzIsReadyOnAMigratedDatabase() async throws {
            try await ServerHarness.with { server in
                let reply = try await server.send("GET", "/readyz")
                #expect(reply.status == 200)
                #expect(reply.json["status"] as? String == "ready")
            }
        }

        @Test func readyzIs503UntilTheDatabaseIsMigrated() async throws {
            try await ServerHarness.with(migrated: false) { server in
                let reply = try await server.send("GET", "/readyz")
                #expect(reply.status == 503)
                #expect((reply.json["reason"] as? String)?.contains("ledger migrate") == true)
            }
        }

        @Test func readyzNamesThePendingMigrations() async throws {
            try await ServerHarness.with { server in
                try server.database.withConnection { _ = try $0.execute("DELETE FROM ledger.schema_migrations WHERE version = 2") }
                let reply = try await server.send("GET", "/readyz")
                #expect(reply.status == 503)
                #expect((reply.json["reason"] as? String)?.contains("0002_api_keys") == true)
            }
        }

        @Test func readyzIs503WhenAFunctionDiffersFromThisBuilds() async throws {
            try await ServerHarness.with { server in
                #expect(try await server.send("GET", "/readyz").status == 200)
                try server.database.withConnection {
                    _ = try $0.execute("UPDATE ledger.schema_definitions SET checksum = 'another' WHERE path = 'commands/consume.sql'")
                }
                let reply = try await server.send("GET", "/readyz")
                #expect(reply.status == 503)
                #expect((reply.json["reason"] as? String)?.contains("ledger migrate") == true)
            }
        }

        @Test func readyzIs503WhenTheDatabaseCannotBeReached() async throws {
            try await ServerHarness.with(databaseURL: "host=127.0.0.1 port=1 user=nobody password=hunter2 connect_timeout=2") { server in
                let reply = try await server.send("GET", "/readyz")
                #expect(reply.status == 503)
                #expect(reply.json["reason"] as? String == "the database cannot be reached")
                #expect(!reply.text.contains("hunter2"))
            }
        }

        @Test func metricsCountRequestsByRouteAndStatusAndOutcomesByCode() async throws {
            try await ServerHarness.with { server in
                let writer = try server.key(.writer)
                _ = try await server.send("GET", "/healthz")
                _ = try await server.send("POST", "/v1/purchases", key: writer, body: Fixture.purchaseLine(["type": nil]))
                _ = try await server.send("POST", "/v1/purchases", key: writer, body: Fixture.purchaseLine(["type": nil, "userId": "\"u2\""]))
                let reply = try await server.send("GET", "/metrics")
                #expect(reply.status == 200)
                #expect(reply.header("Content-Type")?.hasPrefix("text/plain") == true)
                #expect(reply.text.contains(#"http_requests_total{route="/healthz",method="GET",status="200"} 1"#))
                #expect(reply.text.contains(#"http_requests_total{route="/v1/purchases",method="POST",status="200"} 1"#))
                #expect(reply.text.contains(#"http_requests_total{route="/v1/purchases",method="POST",status="403"} 1"#))
                #expect(reply.text.contains(#"ledger_outcomes_total{status="recorded",code=""} 1"#))
                #expect(reply.text.contains(#"ledger_outcomes_total{status="rejected",code="USER_INVALID"} 1"#))
                #expect(reply.text.contains("http_request_duration_seconds_bucket"))
                #expect(reply.text.contains("ledger_pool_connections_in_use"))
                #expect(reply.text.contains("ledger_pool_waiting "))
                #expect(!reply.text.contains("ledger_replica_reads_total"))
            }
        }

        @Test func withAReadReplicaTheQueriesAreAnsweredThereAndCounted() async throws {
            try await ServerHarness.with(readingReplica: true) { server in
                let writer = try server.key(.writer)
                for n in 1...3 {
                    let line = Fixture.purchaseLine(["type": nil, "paymentSeq": "\"P-\(n)\"", "transactionId": "\"T-\(n)\""])
                    #expect(try await server.send("POST", "/v1/purchases", key: writer, body: line).status == 200)
                    // The server reads its own write, from the replica once it has replayed it.
                    let unconsumed = try await server.send("GET", "/v1/users/u1/unconsumed", key: writer)
                    #expect(unconsumed.array.count == n, "\(unconsumed.text)")
                }
                let counts = server.ledger.replicas.counts.withLock { $0 }
                #expect(counts.replica + counts.primary == 3 && counts.replica >= 1, "\(counts)")
                let reply = try await server.send("GET", "/metrics")
                #expect(reply.text.contains(#"ledger_replica_reads_total{answered_by="replica"} \#(counts.replica)"#), "\(reply.text)")
            }
        }
    }
}
