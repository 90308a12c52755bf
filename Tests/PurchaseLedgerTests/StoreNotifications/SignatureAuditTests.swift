import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// `ledger verify --signatures`: the kept proof of every App Store notification is verified
/// again, and whatever no longer proves its event is named.
@Suite("Kept signatures verified again")
struct SignatureAuditTests {
    typealias M = AppleMint
    let mint = AppleMint()

    /// Three App Store notifications (one parked, then released) and one Google Play message.
    func load(_ c: Connection) throws {
        let first = M.transaction("100", original: "100", purchase: "2026-03-01T00:00:00Z", expires: "2026-04-01T00:00:00Z")
        let out = try c.ingest([
            mint.line(M.payload("SUBSCRIBED", uuid: "n-1", signed: "2026-03-01T00:00:00Z", transaction: first)),
            #"{"type":"accountLink","userId":"ua","storeCode":"AS","appAccountToken":"acct-1"}"#,
            mint.line(M.payload("DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", uuid: "n-2", signed: "2026-04-01T00:00:00Z",
                                transaction: first,
                                renewal: M.renewal(original: "100", grace: "2026-04-08T00:00:00Z", signed: "2026-04-01T00:00:00Z"))),
            mint.line(M.payload("TEST", uuid: "n-3", signed: "2026-04-02T00:00:00Z")),
            GoogleNotificationTests.push("m-1", at: "2026-03-01T00:00:00Z", #""testNotification":{"version":"1.0"}"#),
        ], stores: mint.stores)
        #expect(out.map(\.status) == [.parked, .recorded, .recorded, .ignored, .ignored], "\(out)")
    }

    @Test func everyKeptSignatureHoldsAgainstTheRootsItWasVerifiedWith() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try load(c)
                var seen: [Int] = []
                let report = try StoredSignatureAudit(connection: c, roots: mint.chain.roots, batchSize: 2)
                    .verify { seen.append($0) }
                #expect(report.checked == 3 && report.failed == 0 && report.unsigned == 1 && report.failures.isEmpty)
                #expect(report.isIntact)
                #expect(seen == [2, 4], "progress after each batch of two")
            }
        }
    }

    @Test func anotherRootRefusesEveryAppleSignatureNamingTheCheck() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try load(c)
                let report = try StoredSignatureAudit(connection: c, roots: AppleMint().chain.roots).verify()
                #expect(report.checked == 3 && report.failed == 3 && !report.isIntact)
                #expect(report.failures.map(\.notificationId) == ["n-1", "n-2", "n-3"])
                #expect(report.failures.allSatisfy { $0.detail.hasPrefix("SIGNATURE_INVALID: signedPayload") }, "\(report.failures)")
                #expect(try StoredSignatureAudit(connection: c, roots: AppleMint().chain.roots, limit: 1).verify().failures.count == 1)
            }
        }
    }

    /// Kept text changed behind the append-only triggers' back: one byte of a signed payload,
    /// and one event given another notification's (genuine) proof.
    @Test func alteredOrSwappedProofIsNamedByPosition() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try load(c)
                let positions = try c.query("""
                    SELECT position FROM ledger.events WHERE type = 'NotificationReceived' AND data->>'storeCode' = 'AS'
                     ORDER BY position
                    """).map { try $0.decode("position", as: Int64.self) }
                try #require(positions.count == 3)
                try c.executeScript(unsafeSQL: """
                    ALTER TABLE ledger.events DISABLE TRIGGER USER;
                    -- n-1: one character in the middle of its signature changed.
                    UPDATE ledger.events e
                       SET data = jsonb_set(e.data, '{received,signedPayload}',
                                            to_jsonb(overlay(j.jws placing CASE WHEN substr(j.jws, j.at, 1) = 'A' THEN 'B' ELSE 'A' END
                                                             from j.at for 1)))
                      FROM (SELECT position, data->'received'->>'signedPayload' AS jws,
                                   length(data->'received'->>'signedPayload') - strpos(reverse(data->'received'->>'signedPayload'), '.') + 20 AS at
                              FROM ledger.events) j
                     WHERE j.position = e.position AND e.position = \(positions[0]);
                    -- n-3 given n-2's proof.
                    UPDATE ledger.events
                       SET data = jsonb_set(data, '{received}', (SELECT data->'received' FROM ledger.events WHERE position = \(positions[1])))
                     WHERE position = \(positions[2]);
                    ALTER TABLE ledger.events ENABLE TRIGGER USER;
                    """)
                let report = try StoredSignatureAudit(connection: c, roots: mint.chain.roots).verify()
                #expect(report.checked == 3 && report.failed == 2)
                #expect(report.failures.map(\.position) == [positions[0], positions[2]])
                #expect(report.failures.first?.detail.hasPrefix("SIGNATURE_INVALID: signedPayload") == true, "\(report.failures)")
                #expect(report.failures.last?.detail == #"signedPayload.notificationUUID: "n-2", not the event's notificationId "n-3""#)
            }
        }
    }
}
