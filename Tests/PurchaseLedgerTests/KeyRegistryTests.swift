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
                                   'payment:by-u2', 'RenewalRecorded', jsonb_set(\(data), '{userId}', '"u2"'), now())], 'u2')
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

    /// The commands ask a key's registry for its owner and read the key's rows among that
    /// owner's alone: the registry is the one answer to whose a key is, as it must be on a
    /// cluster, where the rows live on their owner's node. So a registry row handed to another
    /// owner by hand hides the key's rows from every command that reads by that key (a consume
    /// alone and in a set, a refund, a cancel), and handing it back shows them again.
    @Test func theCommandsReadAKeysRowsAmongTheOwnerItsRegistryNames() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                for seq in ["P-1", "P-2"] {
                    #expect(try c.run(.record(Fixture.consumable(seq), kind: .purchase)).status == .recorded)
                }
                #expect(try c.run(.record(Fixture.subscription("S-1", original: "T-S-1", from: "2026-01-01T00:00:00Z",
                                                               to: "2026-02-01T00:00:00Z"), kind: .purchase)).status == .recorded)
                func hand(to owner: String) throws {
                    try c.execute("UPDATE ledger.payment_keys SET user_id = \(owner) WHERE payment_seq = 'P-1'")
                    try c.execute("UPDATE ledger.lineage_keys SET user_id = \(owner) WHERE lineage_id = 'T-S-1'")
                }
                let consume = { (seq: String) in
                    LedgerCommand.consume(paymentSeq: seq, userId: "u1", purchaseToken: "tok-\(seq)", time: nil)
                }
                try hand(to: "u9")
                #expect(try c.run(consume("P-1")).error?.code == .notFound)
                let set = try c.executeBatch([consume("P-1"), consume("P-2")])
                #expect(set.map(\.status) == [.rejected, .consumed] && set[0].error?.code == .notFound, "\(set)")
                #expect(try c.run(.refund(paymentSeq: "P-1", time: nil, reason: nil)).error?.code == .notFound)
                #expect(try c.run(.cancel(storeCode: .appStore, originalTransactionId: "T-S-1", time: nil)).error?.code
                        == .notFound)
                #expect(try c.count("SELECT count(*) FROM ledger.events") == 4)

                try hand(to: "u1")
                #expect(try c.run(consume("P-1")).status == .consumed)
                #expect(try c.run(.refund(paymentSeq: "P-2", time: nil, reason: nil)).status == .recorded)
                #expect(try c.run(.cancel(storeCode: .appStore, originalTransactionId: "T-S-1", time: nil)).status
                        == .recorded)
                #expect(try c.keyRegistryAgreement().values.allSatisfy { $0.disagreeing == 0 })
            }
        }
    }

    /// A ledger of the release before has registries that do not name the payment of each key:
    /// `0014_registry_names.sql` adds the columns and fills them from the payments and the
    /// aliases, in the migration's transaction, and the commands find a payment by an alias
    /// through them at once.
    @Test func theRegistriesOfTheReleaseBeforeGetThePaymentOfEachKey() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                #expect(try c.run(.record(Fixture.consumable("P-1"), kind: .purchase)).status == .recorded)
                // Another name of P-1 (what an SDK line with its own paymentSeq does to a payment
                // first learned from a store notification), made by hand.
                try c.execute("""
                    SELECT ledger.project_positions(ARRAY[ledger.append(
                               'payment:P-1', 'PaymentLinked', '{"paymentSeq": "P-1", "userId": "u1", "alias": "A-1"}', now())], 'u1')
                    """)
                #expect(try c.count("SELECT count(*) FROM ledger.payment_keys WHERE payment_seq = 'A-1' AND names_seq = 'P-1'") == 1)
                try c.executeScript(unsafeSQL: """
                    ALTER TABLE ledger.payment_keys DROP COLUMN names_seq;
                    ALTER TABLE ledger.transaction_keys DROP COLUMN payment_seq;
                    DELETE FROM ledger.schema_migrations WHERE name = '0014_registry_names.sql';
                    """)
                let done = try Migrator().migrate(c)
                #expect(done == ["0014_registry_names.sql"], "\(done)")
                let registries = try c.keyRegistryAgreement()
                #expect(registries["payment_keys"] == RegistryAgreement(keys: 2, disagreeing: 0), "\(registries)")
                #expect(registries["transaction_keys"] == RegistryAgreement(keys: 1, disagreeing: 0), "\(registries)")
                let consumed = try c.run(.consume(paymentSeq: "A-1", userId: "u1", purchaseToken: "tok-P-1", time: nil))
                #expect(consumed.status == .consumed && consumed.paymentSeq == "A-1", "\(consumed)")
                #expect(try c.count("SELECT count(*) FROM ledger.payments WHERE payment_seq = 'P-1' AND consumed_at IS NOT NULL") == 1)
            }
        }
    }
}
