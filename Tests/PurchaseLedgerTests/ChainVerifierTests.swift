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

    /// A parked notification's stream moves to its user when the notification is released: its
    /// first events are `''`'s and the rest the user's, with the head. The two chains link up, so
    /// the check finds nothing; a changed link between them, or an event removed at the move, is
    /// named.
    @Test func aStreamMovedToItsOwnerAtARelease() async throws {
        let mint = AppleMint()
        let first = AppleMint.transaction("m01", original: "m00", purchase: "2026-03-01T00:00:00Z",
                                          expires: "2026-04-01T00:00:00Z", account: "acct-m")
        let parked = [AppleMint.payload("SUBSCRIBED", uuid: "m-1", signed: "2026-03-01T00:00:00Z", transaction: first)].map(mint.line)
        let link = #"{"type":"accountLink","userId":"u-m","storeCode":"AS","appAccountToken":"acct-m"}"#
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let outcomes = try c.ingest(parked + [link], stores: mint.stores)
                #expect(outcomes.map(\.status) == [.parked, .recorded], "\(outcomes)")
                let owners = try c.query("SELECT user_id FROM ledger.events WHERE stream = 'notification:AS:m-1' ORDER BY version")
                    .map { try $0.decode("user_id", as: String.self) }
                #expect(owners == ["", "u-m"])
                #expect(try ChainVerifier(connection: c).verify().isIntact)

                // Tampered: the user's first event does not link to the last of ''.
                try tamper(c, "UPDATE ledger.events SET prev_hash = '\\x00'::bytea WHERE stream = 'notification:AS:m-1' AND version = 2")
                let relinked = try ChainVerifier(connection: c).verify().breaks
                #expect(relinked.map(\.problem).sorted { $0.rawValue < $1.rawValue } == [.altered, .removed, .unrecorded], "\(relinked)")
                #expect(relinked.allSatisfy { $0.stream == "notification:AS:m-1" })
                // The parked event removed: the user's chain starts at version 2 with nothing before.
                try tamper(c, "DELETE FROM ledger.events WHERE stream = 'notification:AS:m-1' AND version = 1")
                let removed = try ChainVerifier(connection: c).verify().breaks
                #expect(removed.contains { $0.problem == .removed && $0.version == 2 }, "\(removed)")
            }
        }
    }

    /// The log's keys begin with the owner, so no key forbids a copy of an event under another
    /// owner, at the same position and version: such an event is not `ledger.append`'s. A chain is
    /// one owner's events of a stream, and the check names the copy as events of an owner that has
    /// no head of the stream.
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
                #expect(breaks.first?.detail.contains("events under 'u-copy' but no head of that owner") == true, "\(breaks)")
            }
        }
    }
}
