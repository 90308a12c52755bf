import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// The set-based payment engine (issue 13, item 1): a batch's purchases and renewals are checked
/// and appended as one set per round (`ledger.apply_payments`), and give exactly the outcomes
/// and projections of the same commands run one at a time.
@Suite("Set-based payments")
struct SetEngineTests {
    /// Commands whose outcomes depend on each other inside one batch: retries, conflicts on a
    /// name, a store transaction or a lineage, renewals of a lineage the batch creates, consumes
    /// and refunds of payments it records.
    static let interacting: [LedgerCommand] = {
        let p1 = Fixture.consumable("P-1")
        var otherUser = p1
        otherUser.userId = "u2"
        var sameTransaction = Fixture.consumable("P-2")
        sameTransaction.transactionId = p1.transactionId
        var otherPrice = p1
        otherPrice.price = "1.99"
        let s1 = Fixture.subscription("S-1", transaction: "L-1", from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z")
        let s2 = Fixture.subscription("S-2", transaction: "L-1b", original: "L-1", from: "2026-02-01T00:00:00Z", to: "2026-03-01T00:00:00Z")
        let s3 = Fixture.subscription("S-3", user: "u2", transaction: "L-1c", original: "L-1", from: "2026-03-01T00:00:00Z", to: "2026-04-01T00:00:00Z")
        let s4 = Fixture.subscription("S-4", product: "premium_year", transaction: "L-1d", original: "L-1",
                                      from: "2026-04-01T00:00:00Z", to: "2026-05-01T00:00:00Z")
        return [
            .record(p1, kind: .purchase),
            .record(p1, kind: .purchase),                  // a retry: duplicate
            .record(otherUser, kind: .purchase),           // USER_INVALID
            .record(sameTransaction, kind: .purchase),     // PAYMENT_CONFLICT (the transaction)
            .record(otherPrice, kind: .purchase),          // PAYMENT_CONFLICT (the price)
            .consume(paymentSeq: "P-1", userId: "u1", purchaseToken: "tok-P-1", time: nil),
            .consume(paymentSeq: "P-1", userId: "u1", purchaseToken: "tok-P-1", time: nil),
            .record(s2, kind: .renewal),                   // before its lineage's first payment
            .record(s1, kind: .purchase),
            .record(s3, kind: .renewal),                   // USER_INVALID (the lineage's user)
            .record(s4, kind: .renewal),                   // PRODUCT_INVALID (the lineage's product)
            .record(Fixture.consumable("P-3", user: "u3"), kind: .purchase),
            .refund(paymentSeq: "P-3", time: nil, reason: "test"),
            .record(Fixture.consumable("P-3", user: "u3"), kind: .purchase),
            .consume(paymentSeq: "P-3", userId: "u3", purchaseToken: "tok-P-3", time: nil),
            .cancel(storeCode: .appStore, originalTransactionId: "L-1", time: nil),
            .record(Fixture.consumable("P-4"), kind: .purchase),
        ]
    }()

    /// The projections without the log's positions (which follow the order of appends).
    static func projections(_ c: Connection) throws -> String {
        try c.query("""
            SELECT concat_ws('|',
              (SELECT string_agg((payment_seq, user_id, product_id, price, kind, lineage_id, consumed_at IS NOT NULL,
                                  refunded_at IS NOT NULL, linked_token_sha256)::text, ',' ORDER BY payment_seq) FROM ledger.payments),
              (SELECT string_agg((store_code, original_transaction_id, user_id, product_id, product_type)::text, ','
                                 ORDER BY store_code, original_transaction_id) FROM ledger.lineages),
              (SELECT string_agg((store_code, original_transaction_id, auto_renewing)::text, ',' ORDER BY original_transaction_id)
                 FROM ledger.auto_renew_changes),
              (SELECT string_agg((stream, version)::text, ',' ORDER BY stream) FROM ledger.streams)) AS all
            """)[0].decode("all", as: String?.self) ?? ""
    }

    static func summary(_ outcome: CommandOutcome) -> String {
        "\(outcome.status.rawValue) \(outcome.error?.code.rawValue ?? "-") \(outcome.paymentSeq ?? "-")"
    }

    @Test func aBatchGivesTheOutcomesAndProjectionsOfOneCommandAtATime() async throws {
        let commands = Self.interacting
        let (alone, aloneProjections) = try await TestDatabase.with { db in
            try db.withConnection { c throws in
                (try commands.map { try c.run($0) }.map(Self.summary), try Self.projections(c))
            }
        }
        #expect(alone.filter { $0.hasPrefix("rejected") }.count == 6, "\(alone)")
        let (batched, batchedProjections) = try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let outcomes = try c.executeBatch(commands).map(Self.summary)
                #expect(try ProjectionVerifier(connection: c).verify().isEqual, "the projections equal a replay of the log")
                return (outcomes, try Self.projections(c))
            }
        }
        for (index, (one, set)) in zip(alone, batched).enumerated() {
            #expect(one == set, "command \(index): alone \(one), in the batch \(set)")
        }
        #expect(batchedProjections == aloneProjections)
    }

    @Test func aBatchRunsInRoundsThatKeepTheOrderOfCommandsSharingAKey() async throws {
        let commands = Self.interacting + [
            .restore(userId: "u1", storeCode: .appStore, time: nil, purchases: [Fixture.consumable("P-9")]),
            .record(Fixture.consumable("P-5"), kind: .purchase),
        ]
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let steps = try c.batchSteps(commands)
                let keys = try commands.map { try Set(c.lockKeys(of: $0)) }
                let order = steps.flatMap { $0 }
                #expect(order.sorted() == Array(commands.indices), "every command runs exactly once")
                let position = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) })
                for later in commands.indices {
                    for earlier in 0..<later {
                        let shared = !keys[earlier].isDisjoint(with: keys[later])
                        let ordered = Self.keepsOrder(commands[earlier]) && Self.keepsOrder(commands[later])
                        if shared || ordered || Self.isBarrier(commands[earlier]) || Self.isBarrier(commands[later]) {
                            #expect(position[earlier]! < position[later]!, "command \(earlier) must run before \(later)")
                        }
                    }
                }
                // The first round's payments that share no key go as one statement.
                #expect(steps[0].count > 1, "\(steps)")
            }
        }
    }

    /// Consumes and refunds keep their order among themselves (either may name its payment by
    /// an alias, which no key foresees).
    static func keepsOrder(_ command: LedgerCommand) -> Bool {
        switch command {
        case .consume, .refund: true
        default: false
        }
    }

    /// A restore, a notification, a product or an account link runs after every earlier
    /// command and before every later one.
    static func isBarrier(_ command: LedgerCommand) -> Bool {
        switch command {
        case .restore, .notification, .product, .accountLink: true
        case .record, .consume, .refund, .cancel: false
        }
    }

    /// A cancel keeps only its lineage key's order: the consumes on each side of it stay one
    /// set, and it still runs after its lineage's payment. A refund still splits them. Payments
    /// of one lineage share a round until another command on the lineage comes between them.
    @Test func aCancelDoesNotSplitTheConsumesAroundItAndALineagesPaymentsShareARound() async throws {
        let s1 = Fixture.subscription("S-1", transaction: "L-1", from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z")
        let s2 = Fixture.subscription("S-2", transaction: "L-1b", original: "L-1", from: "2026-02-01T00:00:00Z", to: "2026-03-01T00:00:00Z")
        let s3 = Fixture.subscription("S-3", transaction: "L-1c", original: "L-1", from: "2026-03-01T00:00:00Z", to: "2026-04-01T00:00:00Z")
        let consume = { (seq: String) in LedgerCommand.consume(paymentSeq: seq, userId: "u1", purchaseToken: "tok-\(seq)", time: nil) }
        let cancel = LedgerCommand.cancel(storeCode: .appStore, originalTransactionId: "L-1", time: nil)
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let aroundCancel = try c.batchSteps([.record(s1, kind: .purchase), consume("P-1"), cancel, consume("P-2")])
                #expect(aroundCancel == [[0], [1, 3], [2]])
                let aroundRefund = try c.batchSteps([consume("P-1"), .refund(paymentSeq: "P-3", time: nil, reason: "test"), consume("P-2")])
                #expect(aroundRefund == [[0], [1], [2]])
                let lineage = try c.batchSteps([.record(s1, kind: .purchase), .record(s2, kind: .renewal), cancel, .record(s3, kind: .renewal)])
                #expect(lineage == [[0, 1], [2], [3]])
            }
        }
    }

    /// In one set, a lineage not recorded yet is defined by the first of its payments that is
    /// recorded, as one at a time: not by an earlier one that is refused.
    @Test func aLineagesFirstRecordedPaymentDefinesItInsideASet() async throws {
        let taken = Fixture.subscription("P-X", transaction: "L-1a", original: "L-1", from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z")
        let other = Fixture.subscription("S-2", user: "u2", transaction: "L-1b", original: "L-1", from: "2026-02-01T00:00:00Z", to: "2026-03-01T00:00:00Z")
        let mine = Fixture.subscription("S-3", transaction: "L-1c", original: "L-1", from: "2026-03-01T00:00:00Z", to: "2026-04-01T00:00:00Z")
        let first = LedgerCommand.record(Fixture.consumable("P-X", user: "u9"), kind: .purchase)
        let commands: [LedgerCommand] = [.record(taken, kind: .renewal), .record(other, kind: .renewal), .record(mine, kind: .renewal)]
        try await TestDatabase.with { db in
            try db.withConnection { c throws in #expect(try c.batchSteps(commands) == [[0, 1, 2]]) }
        }
        func outcomes(batched: Bool) async throws -> [String] {
            try await TestDatabase.with { db in
                try db.withConnection { c throws in
                    _ = try c.run(first)
                    let outcomes = batched ? try c.executeBatch(commands) : try commands.map { try c.run($0) }
                    #expect(try ProjectionVerifier(connection: c).verify().isEqual)
                    return outcomes.map(Self.summary)
                }
            }
        }
        let alone = try await outcomes(batched: false)
        #expect(alone == ["rejected USER_INVALID P-X", "recorded - S-2", "rejected USER_INVALID S-3"])
        #expect(try await outcomes(batched: true) == alone)
    }

    @Test func aRestoreRecordsADuplicatedItemOnce() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let s1 = Fixture.subscription("S-1", transaction: "L-1", from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z")
                let outcome = try c.run(.restore(userId: "u1", storeCode: .appStore, time: nil, purchases: [s1, s1]))
                #expect(outcome.status == .restored)
                #expect(outcome.recorded == ["S-1"])
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'PurchaseRecorded'") == 1)
            }
        }
    }

    /// A batch projects only its own events (`project_positions`), though another writer's may
    /// lie between them; a range would insert that writer's payment a second time.
    @Test func aBatchProjectsOnlyItsOwnEvents() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                for seq in ["P-1", "P-2", "P-3"] { #expect(try c.run(.record(Fixture.consumable(seq), kind: .purchase)).status == .recorded) }
                let positions = try c.query("SELECT array_agg(position ORDER BY position)::text AS p FROM ledger.events")[0]
                    .decode("p", as: String.self)
                #expect(positions == "{1,2,3}")
                try c.execute("BEGIN")
                // P-2's rows and its keys, as if its event were not projected yet.
                try c.executeScript(unsafeSQL: """
                    DELETE FROM ledger.payments WHERE payment_seq = 'P-2';
                    DELETE FROM ledger.payment_keys WHERE payment_seq = 'P-2';
                    DELETE FROM ledger.transaction_keys WHERE transaction_id = 'T-P-2';
                    """)
                try c.execute("SELECT ledger.project_positions(ARRAY[2]::bigint[], user_id) FROM ledger.events WHERE position = 2")
                #expect(try c.count("SELECT count(*) FROM ledger.payments") == 3)
                #expect(try c.count("SELECT count(*) FROM ledger.payment_keys") == 3)
                try c.execute("ROLLBACK")
            }
        }
    }

    /// Four writers record batches at once: their positions interleave, each batch projects
    /// its own events, and every payment is recorded and projected once.
    @Test func concurrentBatchesRecordEveryPaymentOnce() async throws {
        try await TestDatabase.with { db in
            // Threads of their own: blocking libpq work must not hold Swift's cooperative pool.
            let writers = (0..<4).map { writer in
                Background { () throws -> Bool in
                    let c = try db.connect()
                    defer { c.close() }
                    for round in 0..<10 {
                        let commands: [LedgerCommand] = (0..<50).map {
                            .record(Fixture.consumable("W\(writer)-\(round)-\($0)", user: "u\($0 % 7)"), kind: .purchase)
                        }
                        guard try c.executeBatch(commands).allSatisfy({ $0.status == .recorded }) else { return false }
                    }
                    return true
                }
            }
            for writer in writers {
                #expect(try await writer.value(timeout: 600) == true, "a writer's batch was not recorded in full")
            }
            try db.withConnection { c throws in
                #expect(try c.count("SELECT count(*) FROM ledger.payments") == 2000)
                #expect(try c.count("SELECT count(*) FROM ledger.events") == 2000)
                #expect(try ProjectionVerifier(connection: c).verify().isEqual)
            }
        }
    }
}
