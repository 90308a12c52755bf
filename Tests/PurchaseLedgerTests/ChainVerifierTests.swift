import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

@Suite("Hash chain verification")
struct ChainVerifierTests {
    /// Records P-1 (purchase, consume, refund: versions 1-3), P-2 (purchase, consume), P-3 (purchase).
    private func record(_ c: Connection) throws {
        for seq in ["P-1", "P-2", "P-3"] { _ = try c.run(.record(Fixture.consumable(seq), kind: .purchase)) }
        for seq in ["P-1", "P-2"] {
            _ = try c.run(.consume(paymentSeq: seq, userId: "u1", purchaseToken: "tok-\(seq)", time: nil))
        }
        _ = try c.run(.refund(paymentSeq: "P-1", time: nil, reason: "customer"))
    }

    /// Runs `sql` as the owner with the append-only triggers disabled, as only a superuser or the
    /// owner can.
    private func tamper(_ c: Connection, _ sql: String) throws {
        try c.executeScript(unsafeSQL: """
            ALTER TABLE ledger.events DISABLE TRIGGER USER;
            \(sql);
            ALTER TABLE ledger.events ENABLE TRIGGER USER;
            """)
    }

    private func position(_ c: Connection, _ stream: String, _ version: Int) throws -> Int64 {
        try c.query("SELECT position FROM ledger.events WHERE stream = \(stream) AND version = \(version)")[0]
            .decode("position", as: Int64.self)
    }

    @Test func anUntouchedLogHolds() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try RebuildFixtures.ingestDemo(c, users: 30)
                let report = try ChainVerifier(connection: c).verify()
                #expect(report.isIntact && report.events > 100 && report.streams > 30)
            }
        }
    }

    @Test func anEventAlteredBehindTheTriggersIsNamedFirst() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try record(c)
                let altered = try position(c, "payment:P-2", 1)
                try tamper(c, "UPDATE ledger.events SET data = jsonb_set(data, '{price}', '\"0.01\"') WHERE position = \(altered)")
                let report = try ChainVerifier(connection: c).verify()
                #expect(report.breaks.count == 1)
                let first = try #require(report.breaks.first)
                #expect(first.position == altered && first.stream == "payment:P-2" && first.version == 1)
                #expect(first.problem == .altered && first.detail.contains("changed"))
            }
        }
    }

    @Test func anEventAlteredAndRehashedIsNamedByTheBrokenLink() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try record(c)
                let altered = try position(c, "payment:P-1", 2)
                try tamper(c, """
                    UPDATE ledger.events SET occurred_at = occurred_at - interval '1 day',
                           hash = ledger.event_hash(prev_hash, stream, version, type, occurred_at - interval '1 day', data)
                     WHERE position = \(altered)
                    """)
                let breaks = try ChainVerifier(connection: c).verify().breaks
                #expect(breaks.map(\.position) == [altered])
                #expect(breaks.first?.problem == .rehashed && breaks.first?.version == 2)
            }
        }
    }

    @Test func removedEventsAreNamedWhereTheyWere() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try record(c)
                let next = try position(c, "payment:P-1", 3)
                let last = try position(c, "payment:P-2", 1)
                try tamper(c, """
                    DELETE FROM ledger.events WHERE stream = 'payment:P-1' AND version = 2;
                    DELETE FROM ledger.events WHERE stream = 'payment:P-2' AND version = 2;
                    DELETE FROM ledger.events WHERE stream = 'payment:P-3'
                    """)
                let breaks = try ChainVerifier(connection: c).verify().breaks
                #expect(breaks.count == 3)
                // First by position: the end of P-2, named at its last remaining event, against the
                // stream's head.
                #expect(breaks[0].position == last && breaks[0].stream == "payment:P-2" && breaks[0].problem == .removed)
                #expect(breaks[0].detail.contains("version 2 was removed"))
                // The middle of P-1: named at the event after the gap.
                #expect(breaks[1].position == next && breaks[1].stream == "payment:P-1" && breaks[1].problem == .removed)
                #expect(breaks[1].detail.contains("version 2 of the stream is missing"))
                // All of P-3: no event left to name.
                #expect(breaks[2].position == nil && breaks[2].stream == "payment:P-3" && breaks[2].problem == .removed)
            }
        }
    }

    @Test func anEventInsertedBehindAppendIsUnrecorded() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try record(c)
                try c.execute("""
                    INSERT INTO ledger.events (stream, version, type, data, occurred_at, prev_hash, hash)
                    SELECT 'payment:P-9', 1, 'PurchaseRecorded', '{}'::jsonb, now(), '\\x'::bytea,
                           ledger.event_hash('\\x'::bytea, 'payment:P-9', 1, 'PurchaseRecorded', now(), '{}'::jsonb)
                    """)
                let breaks = try ChainVerifier(connection: c).verify().breaks
                #expect(breaks.map(\.problem) == [.unrecorded] && breaks.first?.stream == "payment:P-9")
            }
        }
    }

    /// The log's keys begin with the owner, so no key forbids a copy of an event under another
    /// owner, at the same position and version: such an event is not `ledger.append`'s, and the
    /// check names it as a second event of its version.
    @Test func aCopyOfAnEventUnderAnotherOwnerIsUnrecorded() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try record(c)
                let copied = try c.count("""
                    WITH copy AS (
                        INSERT INTO ledger.events (user_id, position, stream, version, type, data, occurred_at, prev_hash, hash)
                        OVERRIDING SYSTEM VALUE
                        SELECT 'u-copy', position, stream, version, type, data, occurred_at, prev_hash, hash
                          FROM ledger.events WHERE version = 1 ORDER BY position LIMIT 1
                        RETURNING position)
                    SELECT position FROM copy
                    """)
                let breaks = try ChainVerifier(connection: c).verify().breaks
                #expect(breaks.map(\.problem) == [.unrecorded] && breaks.first?.position == Int64(copied), "\(breaks)")
                #expect(breaks.first?.detail.contains("another event with this version (position \(copied))") == true, "\(breaks)")
            }
        }
    }
}
