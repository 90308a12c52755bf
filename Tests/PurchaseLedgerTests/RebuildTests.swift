import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

@Suite("Projection rebuild")
struct RebuildTests {
    @Test func verifyFindsTheDemoEqualNamesACorruptedRowAndARebuildRepairsIt() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let events = try RebuildFixtures.ingestDemo(c, users: 300)
                let equal = try ProjectionVerifier(connection: c).verify()
                #expect(equal.isEqual && equal.events == events && equal.differences.isEmpty)

                let (seq, user) = try c.query("SELECT payment_seq, user_id FROM ledger.payments WHERE consumed_at IS NOT NULL ORDER BY payment_seq LIMIT 1")
                    .map { (try $0.decode("payment_seq", as: String.self), try $0.decode("user_id", as: String.self)) }[0]
                try c.execute("UPDATE ledger.payments SET consumed_at = NULL WHERE payment_seq = \(seq)")
                let corrupt = try ProjectionVerifier(connection: c).verify()
                #expect(!corrupt.isEqual)
                #expect(corrupt.differingRows == ["payments": 1, "lineages": 0, "auto_renew_changes": 0, "restores": 0,
                                                  "billing_states": 0, "notifications": 0, "products": 0,
                                                  "account_links": 0, "payment_aliases": 0, "entitled_spans": 0,
                                                  "lineage_states": 0, "payment_keys": 0, "transaction_keys": 0,
                                                  "lineage_keys": 0, "token_keys": 0, "notification_keys": 0])
                let difference = try #require(corrupt.differences.first)
                #expect(corrupt.differences.count == 1)
                #expect(difference.table == "payments" && difference.kind == .changed && difference.column == "consumed_at")
                #expect(difference.key.map(\.value) == [seq] && difference.userId == user)
                #expect(difference.live == nil && difference.replayed != nil)
                #expect(difference.rowDescription == "user \(user), payment \(seq)")

                let summary = try ProjectionRebuilder(connection: c).rebuild()
                #expect(summary.events == events && summary.replayed == events)
                #expect(try ProjectionVerifier(connection: c).verify().isEqual)
                #expect(try c.count("SELECT count(*) FROM ledger.payments WHERE payment_seq = '\(seq)' AND consumed_at IS NOT NULL") == 1)
                #expect(try RebuildFixtures.noRebuildSchemasLeft(c))
            }
        }
    }

    @Test func everyQueryAnswersTheSameAfterARebuild() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try RebuildFixtures.ingestDemo(c, users: 120, seed: 7)
                let before = try RebuildFixtures.queryAnswers(c)
                let digest = try RebuildFixtures.projectionDigest(c)
                #expect(before.count > 100)
                try ProjectionRebuilder(connection: c, batchSize: 500).rebuild()
                let after = try RebuildFixtures.queryAnswers(c)
                #expect(after.count == before.count)
                for (a, b) in zip(before, after) { #expect(a == b) }
                #expect(try RebuildFixtures.projectionDigest(c) == digest)
            }
        }
    }

    @Test func aRebuildRepointsViewsAndFunctionsKeepsGrantsAndLeavesTheCommandsWorking() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                _ = try c.run(.record(Fixture.consumable("P-1"), kind: .purchase))
                try c.executeScript(unsafeSQL: """
                    CREATE SCHEMA report;
                    CREATE VIEW report.unconsumed_count AS
                        SELECT user_id, count(*) AS n FROM ledger.payments WHERE consumed_at IS NULL GROUP BY user_id;
                    CREATE VIEW report.busy_users WITH (security_barrier) AS
                        SELECT v.user_id FROM report.unconsumed_count v JOIN ledger.lineages l USING (user_id)
                        UNION SELECT user_id FROM report.unconsumed_count WHERE n > 1;
                    CREATE FUNCTION report.payment_count() RETURNS bigint LANGUAGE sql STABLE
                        RETURN (SELECT count(*) FROM ledger.payments);
                    COMMENT ON VIEW report.unconsumed_count IS 'per user';
                    GRANT SELECT ON report.unconsumed_count TO ledger_reader;
                    GRANT UPDATE (consumed_at) ON ledger.payments TO ledger_reader;
                    GRANT INSERT ON ledger.restores TO ledger_writer;
                    COMMENT ON TABLE ledger.payments IS 'one row per payment';
                    """)
                let oldTable = try c.query("SELECT 'ledger.payments'::regclass::oid::bigint AS o")[0].decode("o", as: Int64.self)
                try ProjectionRebuilder(connection: c).rebuild()
                #expect(try c.query("SELECT 'ledger.payments'::regclass::oid::bigint AS o")[0].decode("o", as: Int64.self) != oldTable)

                // The commands and the live project_range use the new tables.
                _ = try c.run(.record(Fixture.consumable("P-2"), kind: .purchase))
                #expect(try c.run(.consume(paymentSeq: "P-1", userId: "u1", purchaseToken: "tok-P-1", time: nil)).status == .consumed)
                #expect(try c.count("SELECT n FROM report.unconsumed_count WHERE user_id = 'u1'") == 1)
                #expect(try c.count("SELECT count(*) FROM report.busy_users") == 0)
                #expect(try c.count("SELECT report.payment_count()") == 2)
                #expect(try c.query("SELECT obj_description('report.unconsumed_count'::regclass) AS d")[0].decode("d", as: String.self) == "per user")
                #expect(try c.query("SELECT obj_description('ledger.payments'::regclass) AS d")[0].decode("d", as: String.self) == "one row per payment")
                let grants = try c.query("""
                    SELECT has_table_privilege('ledger_reader', 'report.unconsumed_count', 'SELECT') AS a,
                           has_table_privilege('ledger_reader', 'ledger.payments', 'SELECT') AS b,
                           has_table_privilege('ledger_writer', 'ledger.restores', 'INSERT') AS c,
                           has_table_privilege('ledger_writer', 'ledger.payments', 'SELECT') AS d,
                           has_column_privilege('ledger_reader', 'ledger.payments', 'consumed_at', 'UPDATE') AS e
                    """)[0]
                #expect(try ["a", "b", "c", "d", "e"].allSatisfy { try grants.decode($0, as: Bool.self) })
                #expect(try ProjectionVerifier(connection: c).verify().isEqual)
                #expect(try RebuildFixtures.noRebuildSchemasLeft(c))
            }
        }
    }

    @Test func aShadowLeftByAKilledRebuildIsDroppedAndTheRebuildStartsOver() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                try RebuildFixtures.ingestDemo(c, users: 40)
                let digest = try RebuildFixtures.projectionDigest(c)
                // What a rebuild killed after its replay committed leaves: a half-caught-up shadow.
                try c.execute("SELECT ledger.install_projections('ledger_rebuild')")
                try c.execute("SELECT ledger_rebuild.project_range(1, 10)")
                let summary = try ProjectionRebuilder(connection: c).rebuild()
                #expect(summary.events == (try c.count("SELECT count(*) FROM ledger.events")))
                #expect(try RebuildFixtures.projectionDigest(c) == digest)
                #expect(try RebuildFixtures.noRebuildSchemasLeft(c))
            }
        }
    }

    @Test func aLostConnectionHalfwayLeavesTheLiveProjectionsAndASecondRebuildCompletes() async throws {
        try await TestDatabase.with { db in
            let observer = try db.connect()
            defer { observer.close() }
            try db.withConnection { c throws in
                try RebuildFixtures.appendPurchases(c, count: 3000)
                let digest = try RebuildFixtures.projectionDigest(c)
                let pid = c.serverProcessID
                var batches = 0
                #expect(throws: PostgresError.self) {
                    try ProjectionRebuilder(connection: c, batchSize: 200).rebuild { progress in
                        guard progress.phase == .replaying, progress.eventsDone > 0 else { return }
                        batches += 1
                        if batches == 3 { _ = try? observer.query("SELECT pg_terminate_backend(\(pid))") }
                    }
                }
                #expect(batches == 3)
                #expect(try RebuildFixtures.projectionDigest(observer) == digest)
                #expect(try observer.count("SELECT count(*) FROM pg_namespace WHERE nspname = 'ledger_rebuild'") == 0)
            }
            try db.withConnection { c throws in
                try ProjectionRebuilder(connection: c).rebuild()
                #expect(try RebuildFixtures.projectionDigest(c) == (try RebuildFixtures.projectionDigest(observer)))
                #expect(try ProjectionVerifier(connection: c).verify().isEqual)
            }
        }
    }

    @Test func aSecondRebuildAtOnceIsRefusedNamingTheFirst() async throws {
        try await TestDatabase.with { db in
            let holder = try db.connect()
            defer { holder.close() }
            // The lock a running rebuild holds ("LEDGRBLD").
            try holder.query("SELECT pg_advisory_lock(\(Int64(0x4C45_4447_5242_4C44)))")
            try db.withConnection { c throws in
                #expect(throws: RebuildError.alreadyRunning(pid: Int(holder.serverProcessID))) {
                    try ProjectionRebuilder(connection: c).rebuild()
                }
                #expect(try c.count("SELECT count(*) FROM pg_namespace WHERE nspname = 'ledger_rebuild'") == 0)
            }
            try holder.query("SELECT pg_advisory_unlock_all()")
            try db.withConnection { c throws in
                #expect(try ProjectionRebuilder(connection: c).rebuild().events == 0)
            }
        }
    }

    @Test func unknownProjectionNamesAreRefused() throws {
        #expect(try ProjectionSet.named("ledger") == [.ledger])
        #expect(try ProjectionSet.named("all") == ProjectionSet.allCases)
        #expect(throws: RebuildError.unknownProjection("payments")) { try ProjectionSet.named("payments") }
        #expect("\(RebuildError.unknownProjection("payments"))".contains("ledger, all"))
    }
}
