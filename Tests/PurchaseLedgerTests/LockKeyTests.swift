import Foundation
import LedgerDemo
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// A batch takes the advisory locks of all its commands first, in one global order
/// (`ledger.command_lock_keys`, `ledger.lock_keys`): that is what keeps concurrent ingests free
/// of deadlocks. It holds only if those keys are all the keys the command functions take. These
/// tests run every kind of command, one at a time, after taking its keys, and require that the
/// command's function took no advisory lock more.
@Suite("Lock keys")
struct LockKeyTests {
    typealias M = AppleMint
    let mint = AppleMint()

    /// The advisory locks this connection's transaction holds.
    func advisoryLocks(_ c: Connection) throws -> Set<String> {
        Set(try c.query("""
            SELECT classid::text || ':' || objid::text AS lock FROM pg_locks
             WHERE locktype = 'advisory' AND pid = pg_backend_pid()
            """).map { try $0.decode("lock", as: String.self) })
    }

    /// The writers' gate (`ledger.writers_gate`), as `advisoryLocks` names it: `ledger.lock_keys`
    /// takes it before the keys, shared, and a rebuild's swap takes it alone.
    func writersGate(_ c: Connection) throws -> String {
        try c.query("""
            SELECT ((g >> 32) & 4294967295)::text || ':' || (g & 4294967295)::text AS lock FROM ledger.writers_gate() AS g
            """)[0].decode("lock", as: String.self)
    }

    /// Applies each line as its own transaction, its lock keys taken first; returns the outcomes.
    func applyCheckingLocks(_ c: Connection, _ lines: [String], stores: StoreConfiguration) throws -> [CommandOutcome] {
        var outcomes: [CommandOutcome] = []
        for (index, line) in lines.enumerated() {
            // The demo has lines the decoder refuses on purpose: they reach no SQL function.
            guard let command = try? LedgerCommand(line: Array(line.utf8), stores: stores) else { continue }
            try c.execute("BEGIN")
            try c.lockKeys(for: [command])
            let before = try advisoryLocks(c)
            #expect(before.contains(try writersGate(c)), "line \(index + 1): the writers' gate")
            #expect(before.count == Set(try c.lockKeys(of: command)).count + 1, "line \(index + 1): one lock per key, and the gate")
            let outcome = try c.executeBatch([command])[0]
            let after = try advisoryLocks(c)
            #expect(after == before, "line \(index + 1) (\(outcome.status)) took locks its lockKeys lack: \(line.prefix(120))")
            try c.execute("COMMIT")
            outcomes.append(outcome)
        }
        return outcomes
    }

    @Test func everyContractCommandTakesOnlyItsLockKeys() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                // Purchases, renewals, consumes, refunds, cancels and restores, as the demo makes them.
                let demo = Array(DemoGenerator(seed: 7, users: 30, maxLines: 400))
                let product = #"{"type":"product","storeCode":"AS","productId":"coins","productType":"CONSUMABLE"}"#
                let outcomes = try applyCheckingLocks(c, demo + [product, product], stores: .none)
                let kinds = Set(outcomes.map(\.status))
                #expect(kinds.isSuperset(of: [.recorded, .duplicate, .consumed, .restored]), "\(kinds)")
            }
        }
    }

    @Test func everyStoreNotificationTakesOnlyItsLockKeys() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let first = AppleNotificationTests.first, second = AppleNotificationTests.second
                let refunded = M.transaction("101", original: "100", purchase: "2026-04-01T00:00:00Z", expires: "2026-05-01T00:00:00Z",
                                             extra: "\"revocationDate\":\(M.ms("2026-04-10T00:00:00Z")),\"revocationReason\":1")
                let extended = M.transaction("101", original: "100", purchase: "2026-04-01T00:00:00Z", expires: "2026-05-15T00:00:00Z")
                let apple = [
                    AppleNotificationTests.link,
                    mint.line(M.payload("SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "n-1", signed: "2026-03-01T00:00:00Z", transaction: first)),
                    mint.line(M.payload("DID_RENEW", uuid: "n-2", signed: "2026-04-01T00:00:00Z", transaction: second)),
                    mint.line(M.payload("DID_RENEW", uuid: "n-2", signed: "2026-04-01T00:00:00Z", transaction: second)),
                    mint.line(M.payload("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", uuid: "n-off",
                                        signed: "2026-04-05T00:00:00Z", transaction: second)),
                    mint.line(M.payload("DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", uuid: "n-g", signed: "2026-05-01T00:00:00Z",
                                        transaction: second,
                                        renewal: M.renewal(original: "100", grace: "2026-05-08T00:00:00Z", signed: "2026-05-01T00:00:00Z"))),
                    mint.line(M.payload("REFUND", uuid: "n-rf", signed: "2026-04-10T00:00:00Z", transaction: refunded)),
                    mint.line(M.payload("REFUND_REVERSED", uuid: "n-rr", signed: "2026-04-20T00:00:00Z", transaction: refunded)),
                    mint.line(M.payload("RENEWAL_EXTENDED", uuid: "n-e", signed: "2026-04-25T00:00:00Z", transaction: extended)),
                    mint.line(M.payload("TEST", uuid: "n-t", signed: "2026-03-01T00:00:00Z")),
                ]
                typealias G = GoogleNotificationTests
                let google = [
                    G.purchase,
                    G.push("m-1", at: "2026-04-01T00:00:00Z", G.subscription(2), payment: G.renewal),
                    G.push("m-2", at: "2026-04-01T00:00:00Z", G.subscription(4)),
                    G.push("m-3", at: "2026-04-10T00:00:00Z", G.subscription(3)),
                    G.push("m-5", at: "2026-05-01T00:00:00Z", G.subscription(6)),
                    G.push("m-8", at: "2026-05-25T00:00:00Z", G.subscription(13)),
                ]
                let outcomes = try applyCheckingLocks(c, apple + google, stores: mint.stores)
                #expect(!outcomes.contains { $0.status == .rejected }, "\(outcomes.compactMap(\.error))")
                #expect(outcomes.filter { $0.status == .recorded }.count >= 8)
            }
        }
    }
}
