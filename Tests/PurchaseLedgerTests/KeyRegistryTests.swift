import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// The key registries keep what the projection tables' keys, which include the owner, cannot:
/// that a paymentSeq, a store transaction or a subscription lineage names one thing of one
/// user. The commands decide conflicts before they append (`PAYMENT_CONFLICT`,
/// `USER_INVALID`), so these events are made by hand, past those decisions, on a stream of
/// their own (a stream is one owner's: the append itself refuses another owner's).
@Suite("Key registries")
struct KeyRegistryTests {
    /// A second owner's event claiming a key of the first is refused by the key's registry, and
    /// nothing of it is written: not the event, not its projection rows.
    @Test(arguments: [
        ("the paymentSeq", #"jsonb_set(e.data, '{transactionId}', '"T-other"')"#, "payment_keys_pkey"),
        ("the store transaction", #"jsonb_set(e.data, '{paymentSeq}', '"S-other"')"#, "transaction_keys_pkey"),
        ("the lineage", #"jsonb_set(jsonb_set(e.data, '{paymentSeq}', '"S-other"'), '{transactionId}', '"T-other"')"#,
         "lineage_keys_pkey"),
    ])
    func anotherOwnersClaimOfAKeyIsRefusedByItsRegistry(key: String, data: String, constraint: String) async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                _ = try c.run(.record(Fixture.subscription("S-1", original: "T-S-1", from: "2026-01-01T00:00:00Z",
                                                           to: "2026-02-01T00:00:00Z"), kind: .purchase))
                let events = try c.count("SELECT count(*) FROM ledger.events")
                let payments = try c.count("SELECT count(*) FROM ledger.payments")
                // u1's purchase again, as u2's, with only what the argument changes: a renewal of
                // the same lineage by another user, past the command's checks.
                do {
                    try c.execute(SQL(unsafeSQL: """
                        SELECT ledger.project_positions(ARRAY[ledger.append(
                                   'payment:by-u2', 'RenewalRecorded', jsonb_set(\(data), '{userId}', '"u2"'), now())])
                          FROM ledger.events e WHERE e.type = 'PurchaseRecorded'
                        """))
                    Issue.record("u2's claim of \(key) of u1 was accepted")
                } catch let error as PostgresError {
                    #expect(error.sqlState == .uniqueViolation && error.description.contains(constraint), "\(error)")
                }
                #expect(try c.count("SELECT count(*) FROM ledger.events") == events)
                #expect(try c.count("SELECT count(*) FROM ledger.payments") == payments)
                #expect(try c.count("SELECT count(*) FROM ledger.lineages WHERE user_id = 'u2'") == 0)
                #expect(try c.keyRegistryAgreement().values.allSatisfy { $0.disagreeing == 0 })
            }
        }
    }

    /// The same event by the key's owner is accepted: the registry refuses another owner, not a
    /// second event (a renewal claims no key its lineage already has).
    @Test func theOwnersRenewalOfItsLineageIsAccepted() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                _ = try c.run(.record(Fixture.subscription("S-1", original: "T-S-1", from: "2026-01-01T00:00:00Z",
                                                           to: "2026-02-01T00:00:00Z"), kind: .purchase))
                _ = try c.run(.record(Fixture.subscription("S-2", transaction: "T-S-2", original: "T-S-1",
                                                           from: "2026-02-01T00:00:00Z", to: "2026-03-01T00:00:00Z"),
                                      kind: .renewal))
                #expect(try c.count("SELECT count(*) FROM ledger.payments WHERE lineage_id = 'T-S-1'") == 2)
                let registries = try c.keyRegistryAgreement()
                #expect(registries["payment_keys"] == RegistryAgreement(keys: 2, disagreeing: 0), "\(registries)")
                #expect(registries["transaction_keys"] == RegistryAgreement(keys: 2, disagreeing: 0), "\(registries)")
                #expect(registries["lineage_keys"] == RegistryAgreement(keys: 1, disagreeing: 0), "\(registries)")
            }
        }
    }
}
