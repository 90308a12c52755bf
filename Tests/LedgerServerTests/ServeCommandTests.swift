import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LedgerTestSupport
import Postgres
import Testing

extension LedgerServerTests {
    /// `ledger serve` and `ledger keys` as operators run them: the built binary, a real database.
    @Suite("ledger serve and ledger keys, the command")
    struct ServeCommandTests {
        @Test func keysAreAddedListedAndRevokedByTheCommand() async throws {
            try await TestDatabase.with { db in
                let added = try LedgerProcess.run(["keys", "add", "--role", "reader", "--database-url", db.conninfo])
                #expect(added.status == 0)
                let key = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(key.hasPrefix("lk_") && key.count == 46)
                #expect(added.stderr.contains("shown only this once"))
                let listed = try LedgerProcess.run(["keys", "list", "--json", "--database-url", db.conninfo])
                let keys = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
                #expect(keys.count == 1 && keys[0]["role"] as? String == "reader" && keys[0]["revokedAt"] is NSNull)
                #expect(!listed.stdout.contains(key))
                let id = try #require(keys[0]["id"] as? Int)
                #expect(try LedgerProcess.run(["keys", "revoke", String(id), "--database-url", db.conninfo]).status == 0)
                #expect(try LedgerProcess.run(["keys", "revoke", String(id), "--database-url", db.conninfo]).status == 1)
                let bad = try LedgerProcess.run(["keys", "add", "--role", "admin", "--database-url", db.conninfo])
                #expect(bad.status != 0 && bad.stderr.contains("role"))
            }
        }

        @Test func aBadSettingStopsServeWithAMessageNamingIt() throws {
            let out = try LedgerProcess.run(["serve", "--port", "70000", "--database-url", "host=/nonexistent"])
            #expect(out.status == 2)
            #expect(out.stderr.contains("LEDGER_HTTP_PORT"))
        }

        /// SIGTERM: the server stops accepting, the request in flight finishes (its consume commits
        /// and is answered 200), the pool closes and the process exits 0.
        @Test func sigtermFinishesTheRequestInFlightThenExits() async throws {
            try await TestDatabase.with { db in
                let key = try db.withConnection { try $0.addAPIKey(role: .writer).key }
                try db.withConnection { _ = try $0.ingest([Fixture.purchaseLine()]) }
                let serve = try LedgerProcess.start(["serve", "--port", "0", "--database-url", db.conninfo])
                defer { serve.kill() }
                #expect(serve.waitForOutput(timeout: 30) { $0.contains { $0.hasPrefix("listening on http://127.0.0.1:") } })
                let port = try #require(serve.linesSoFar.first.flatMap { Int($0.split(separator: ":").last ?? "") })

                // Lock the payment's row, so the consume waits inside the server.
                let locker = try db.connect()
                defer { locker.close() }
                try locker.executeScript(unsafeSQL: "BEGIN; SELECT 1 FROM ledger.payments WHERE payment_seq = 'P-1' FOR UPDATE;")
                let consume = Task {
                    try await HTTP.send("POST", "http://127.0.0.1:\(port)/v1/consumes", key: key,
                                        body: #"{"userId":"u1","paymentSeq":"P-1","purchaseToken":"tok-1"}"#)
                }
                // Wait until the consume is inside the server, blocked on the row lock.
                let watcher = try db.connect()
                defer { watcher.close() }
                let blocked = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                var polls = 0
                while try watcher.count(blocked) == 0, polls < 600 {
                    polls += 1
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(try watcher.count(blocked) == 1)
                serve.kill(SIGTERM)
                // The listener closes at once; the process waits for the request in flight.
                var refused = false
                for _ in 0..<100 where !refused {
                    do {
                        _ = try await HTTP.send("GET", "http://127.0.0.1:\(port)/healthz", timeout: 3)
                        try await Task.sleep(for: .milliseconds(50))
                    } catch {
                        refused = true
                    }
                }
                #expect(refused)
                #expect(serve.process.isRunning)

                try locker.executeScript(unsafeSQL: "COMMIT")
                let response = try await consume.value
                #expect(response.status == 200 && response.json["status"] as? String == "consumed")
                let out = serve.wait(timeout: 30)
                #expect(out.status == 0 && !out.signalled)
                #expect(out.stderr.contains("route=/v1/consumes") && out.stderr.contains("status=200"))
                #expect(!out.stderr.contains(key) && !out.stderr.contains("tok-1"))
                #expect(try db.withConnection { try $0.count("SELECT count(*) FROM ledger.payments WHERE consumed_at IS NOT NULL") } == 1)
            }
        }

        /// SIGTERM while 16 clients keep posting purchases: the server stops accepting, finishes
        /// what is in flight and exits 0, and every purchase it answered 200 is in the log.
        @Test func sigtermUnderLoadLosesNoAcknowledgedPurchase() async throws {
            try await TestDatabase.with { db in
                let key = try db.withConnection { try $0.addAPIKey(role: .writer).key }
                let serve = try LedgerProcess.start(["serve", "--port", "0", "--database-url", db.conninfo])
                defer { serve.kill() }
                #expect(serve.waitForOutput(timeout: 30) { $0.contains { $0.hasPrefix("listening on http://127.0.0.1:") } })
                let port = try #require(serve.linesSoFar.first.flatMap { Int($0.split(separator: ":").last ?? "") })
                let acknowledged = try await withThrowingTaskGroup(of: [String].self) { clients in
                    for client in 0..<16 {
                        clients.addTask {
                            var mine: [String] = []
                            for n in 0..<100_000 {
                                let seq = "L-\(client)-\(n)"
                                let line = Fixture.purchaseLine(["paymentSeq": "\"\(seq)\"", "transactionId": "\"T-\(seq)\"",
                                                                 "purchaseToken": "\"tok-\(seq)\"", "type": nil])
                                guard let reply = try? await HTTP.send("POST", "http://127.0.0.1:\(port)/v1/purchases",
                                                                       key: key, body: line, timeout: 30) else { break }
                                guard reply.status == 200 else { break }
                                mine.append(seq)
                            }
                            return mine
                        }
                    }
                    // Let the load run, then stop the server in the middle of it.
                    var waited = 0
                    while try db.withConnection({ try $0.count("SELECT count(*) FROM ledger.payments") }) < 200, waited < 600 {
                        waited += 1
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    serve.kill(SIGTERM)
                    return try await clients.reduce(into: []) { $0 += $1 }
                }
                let out = serve.wait(timeout: 60)
                #expect(out.status == 0 && !out.signalled)
                #expect(acknowledged.count >= 200)
                let logged = try db.withConnection { connection in
                    Set(try connection.query("SELECT payment_seq FROM ledger.payments").map { try $0.decode("payment_seq", as: String.self) })
                }
                #expect(Set(acknowledged).subtracting(logged).isEmpty)
            }
        }
    }
}
