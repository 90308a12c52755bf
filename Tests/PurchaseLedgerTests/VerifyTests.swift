import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

@Suite("Projection verification")
struct VerifyTests {
    @Test func missingExtraAndRescaledRowsAreEachNamed() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                _ = try c.run(.record(Fixture.consumable("P-1"), kind: .purchase))
                _ = try c.run(.record(Fixture.consumable("P-2", user: "u2"), kind: .purchase))
                _ = try c.run(.record(Fixture.subscription("S-1", from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z"), kind: .purchase))
                _ = try c.run(.cancel(storeCode: .appStore, originalTransactionId: "T-S-1", time: nil))
                try c.executeScript(unsafeSQL: """
                    UPDATE ledger.payments SET price = 0.990 WHERE payment_seq = 'P-1';
                    DELETE FROM ledger.payments WHERE payment_seq = 'P-2';
                    INSERT INTO ledger.auto_renew_changes VALUES ('GG', 'T-X', now(), false, 999, 'u1');
                    UPDATE ledger.lineages SET user_id = 'u9';
                    UPDATE ledger.payment_keys SET user_id = 'u9' WHERE payment_seq = 'P-1';
                    """)
                let report = try ProjectionVerifier(connection: c).verify()
                #expect(!report.isEqual)
                #expect(report.differingRows == ["payments": 2, "lineages": 1, "auto_renew_changes": 1, "restores": 0,
                                                 "billing_states": 0, "notifications": 0, "products": 0,
                                                 "account_links": 0, "payment_aliases": 0, "entitled_spans": 0,
                                                 "lineage_states": 0, "payment_keys": 1, "transaction_keys": 0,
                                                 "lineage_keys": 0, "token_keys": 0, "notification_keys": 0])
                let byRow = Dictionary(grouping: report.differences, by: \.rowDescription)
                // 0.990 is a number equal to 0.99, but not the price as recorded.
                #expect(byRow["user u1, payment P-1"]?.map { [$0.column, $0.live, $0.replayed] } == [["price", "0.990", "0.99"]])
                #expect(byRow["user u2, payment P-2"]?.first?.kind == .missing)
                #expect(byRow["user u1, lineage GG T-X, position 999"]?.first?.kind == .extra)
                let lineage = try #require(report.differences.first { $0.table == "lineages" })
                #expect(lineage.column == "user_id" && lineage.live == "u9" && lineage.replayed == "u1")
                #expect(lineage.rowDescription == "user u9, lineage AS T-S-1")
                #expect(try RebuildFixtures.noRebuildSchemasLeft(c))
            }
        }
    }

    @Test func verifyWhileWritersAppendComparesOneInstantAndFindsThemEqual() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in try RebuildFixtures.appendPurchases(c, count: 10_000) }
            let writers = RebuildWriters(db, count: 2)
            writers.start()
            #expect(try await writers.waitFor(commands: 20))
            let reports = try db.withConnection { c in
                try (0..<2).map { _ in try ProjectionVerifier(connection: c, batchSize: 1500).verify() }
            }
            try await writers.stop()
            #expect(writers.failures.isEmpty, "\(writers.failures.prefix(5))")
            let differences = reports.flatMap { $0.differences }
            #expect(reports.allSatisfy { $0.isEqual }, "\(differences.prefix(5))")
            #expect(reports[1].events > reports[0].events)
        }
    }
}
