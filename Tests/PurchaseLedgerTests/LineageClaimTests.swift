import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// A lineage's first payment (`ledger.lineages.first_position`, `ledger.lineage_keys`) is the
/// one recorded first. On a Citus cluster a renewal's event says that its lineage is begun
/// already (`lineageClaimed: false`, from `ledger.apply_payment`), since there it can hold the
/// lower position (`CommandsOnWorkers.aUsersShardsMovedToAnotherWorkerKeepEveryAnswer`); on one
/// server the order of positions says the same, and no event carries the mark.
@Suite("A lineage's first payment")
struct LineageClaimTests {
    @Test(arguments: [false, true])
    func oneServerWritesNoLineageMark(batched: Bool) async throws {
        let commands: [LedgerCommand] = [
            .record(Fixture.subscription("S-1", user: "u-1", transaction: "L-1",
                                         from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z"), kind: .purchase),
            .record(Fixture.subscription("S-2", user: "u-1", transaction: "L-1b", original: "L-1",
                                         from: "2026-02-01T00:00:00Z", to: "2026-03-01T00:00:00Z"), kind: .renewal),
            .record(Fixture.subscription("S-3", user: "u-1", transaction: "L-1c", original: "L-1",
                                         from: "2026-03-01T00:00:00Z", to: "2026-04-01T00:00:00Z"), kind: .renewal),
        ]
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let outcomes = batched ? try c.executeBatch(commands) : try commands.map { try c.run($0) }
                #expect(outcomes.map(\.status) == [.recorded, .recorded, .recorded], "\(outcomes)")
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE data ? 'lineageClaimed'") == 0,
                        "one server writes no mark")
                #expect(try c.query("""
                    SELECT p.payment_seq FROM ledger.lineages l
                      JOIN ledger.payments p ON p.user_id = l.user_id AND p.recorded_position = l.first_position
                    """).map { try $0.decode("payment_seq", as: String.self) } == ["S-1"])
                #expect(try c.keyRegistryAgreement()["lineage_keys"]?.disagreeing == 0)
                let report = try ProjectionVerifier(connection: c).verify()
                #expect(report.isEqual, "\(report.differences)")
            }
        }
    }
}
