import Foundation
import LedgerTestSupport
import Testing

extension LedgerServerTests {
    /// `GET /v1/jobs` and `POST /v1/jobs/{id}/retry` (docs/contract.md §6.2 over HTTP), and the
    /// jobs' gauges in `/metrics`.
    @Suite("ledger serve: the jobs routes")
    struct JobRouteTests {
        /// Three jobs as runners leave them: one pending, one failed with the store's answer, one done.
        static func seed(_ server: ServerHarness) throws {
            _ = try server.database.withConnection { c in
                try c.execute("""
                    INSERT INTO ledger.jobs (kind, purpose, args, secret, state, attempts, finished_at, last_status, last_code, last_error, outcome)
                    VALUES ('google.subscription', 'notification:GG:m-1', '{"packageName":"com.example.game"}', 'secret-token-1', 'pending', 0, NULL, NULL, NULL, NULL, NULL),
                           ('google.product', 'notification:GG:m-2', '{"sku":"gem_100"}', 'secret-token-2', 'failed', 1, now(), 404, 'purchaseTokenNotFound', 'google-play productsv2.get: HTTP 404', 'failed'),
                           ('apple.consumption', 'apple.consumption:c-1', '{"transactionId":"1"}', NULL, 'done', 1, now(), NULL, NULL, NULL, 'done'),
                           ('google.acknowledge', 'acknowledge:GG:ab12', '{"waitsFor":"m-9/subscriptionsv2"}', 'secret-token-3', 'waiting', 0, NULL, NULL, NULL, NULL, NULL)
                    """)
            }
        }

        @Test func aReaderListsTheJobsWithoutTheirTokensAndByState() async throws {
            try await ServerHarness.with { server in
                try Self.seed(server)
                let reader = try server.key(.reader)
                let all = try await server.send("GET", "/v1/jobs", key: reader)
                #expect(all.status == 200)
                #expect(!all.text.contains("secret-token"))
                let jobs = try #require(try JSONSerialization.jsonObject(with: Data(all.text.utf8)) as? [[String: Any]])
                #expect(jobs.map { $0["kind"] as? String } == ["google.acknowledge", "apple.consumption", "google.product", "google.subscription"])
                let waiting = try await server.send("GET", "/v1/jobs?state=waiting", key: reader)
                #expect(waiting.status == 200 && waiting.text.contains("google.acknowledge") && !waiting.text.contains("google.product"))
                let failed = try await server.send("GET", "/v1/jobs?state=failed", key: reader)
                let only = try #require(try JSONSerialization.jsonObject(with: Data(failed.text.utf8)) as? [[String: Any]])
                #expect(only.count == 1)
                #expect(only.first?["lastStatus"] as? Int == 404)
                #expect(only.first?["lastCode"] as? String == "purchaseTokenNotFound")
                #expect(try await server.send("GET", "/v1/jobs?state=stuck", key: reader).code == "INVALID_INPUT")
                #expect(try await server.send("GET", "/v1/jobs?limit=0", key: reader).status == 400)
                // A reader may not retry.
                #expect(try await server.send("POST", "/v1/jobs/2/retry", key: reader).status == 403)
            }
        }

        @Test func aWriterRetriesAFailedJobOnly() async throws {
            try await ServerHarness.with { server in
                try Self.seed(server)
                let writer = try server.key(.writer)
                let ids = try server.database.withConnection { c in
                    try c.query("SELECT id, state FROM ledger.jobs").map { (try $0.decode("id", as: Int64.self), try $0.decode("state", as: String.self)) }
                }
                let failed = try #require(ids.first { $0.1 == "failed" }?.0)
                let done = try #require(ids.first { $0.1 == "done" }?.0)
                let retried = try await server.send("POST", "/v1/jobs/\(failed)/retry", key: writer)
                #expect(retried.status == 200)
                #expect(retried.json["state"] as? String == "pending")
                #expect(try server.database.withConnection { try $0.count("SELECT count(*) FROM ledger.jobs WHERE state = 'pending'") } == 2)
                let again = try await server.send("POST", "/v1/jobs/\(done)/retry", key: writer)
                #expect(again.status == 409 && again.code == "JOB_NOT_FAILED")
                #expect(try await server.send("POST", "/v1/jobs/999999/retry", key: writer).status == 404)
                let bad = try await server.send("POST", "/v1/jobs/abc/retry", key: writer)
                #expect(bad.status == 400 && bad.json["message"] as? String == "id: expected a job id (a positive whole number), got \"abc\"")
            }
        }

        @Test func metricsShowTheJobsByKindAndState() async throws {
            try await ServerHarness.with { server in
                try Self.seed(server)
                let text = try await server.send("GET", "/metrics").text
                #expect(text.contains(#"ledger_jobs{kind="google.subscription",state="pending"} 1"#))
                #expect(text.contains(#"ledger_jobs{kind="google.product",state="failed"} 1"#))
                #expect(text.contains(#"ledger_jobs{kind="apple.consumption",state="pending"} 0"#))
                #expect(text.contains(#"ledger_jobs{kind="google.acknowledge",state="waiting"} 1"#))
                #expect(text.contains("ledger_jobs_oldest_pending_seconds"))
            }
        }
    }
}
