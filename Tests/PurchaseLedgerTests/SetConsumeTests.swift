import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// Consumes applied as sets: a round's consumes go to the database as one
/// statement (`ledger.consume_batch`, the rules of `ledger.apply_consumes`), and give exactly the
/// outcomes, events and projections of the same commands run one at a time.
@Suite("Set-based consumes")
struct SetConsumeTests {
    typealias M = AppleMint
    let mint = AppleMint()

    /// Two consumables learned from App Store notifications for user `ua`: C-1, which the SDK
    /// line P-77 then names too (an alias, with its token), and C-2, which has no token.
    func learnedFromTheStore(_ c: Connection) throws -> Payment {
        let lines = [#"{"type":"accountLink","userId":"ua","storeCode":"AS","appAccountToken":"acct-1"}"#] + ["C-1", "C-2"].map {
            mint.line(M.payload("ONE_TIME_CHARGE", uuid: "n-\($0)", signed: "2026-03-01T00:00:00Z",
                                transaction: M.transaction($0, original: $0, product: "coins_100", purchase: "2026-03-01T00:00:00Z",
                                                           type: "Consumable", price: 990)))
        }
        #expect(try c.ingest(lines, stores: mint.stores).map(\.status) == [.recorded, .recorded, .recorded])
        var sdk = Fixture.consumable("P-77", user: "ua", product: "coins_100")
        sdk.transactionId = "C-1"
        #expect(try c.run(.record(sdk, kind: .purchase)).status == .duplicate)
        #expect(try c.count("SELECT count(*) FROM ledger.payment_aliases WHERE alias_seq = 'P-77' AND payment_seq = 'C-1'") == 1)
        return sdk
    }

    /// A consume of `seq` at `minute` past 2026-03-02T00:00Z, with the payment's own token
    /// (`tok-` and its name) unless another is given.
    static func consume(_ seq: String, user: String = "u1", token: String? = nil, minute: Int) -> LedgerCommand {
        .consume(paymentSeq: seq, userId: user, purchaseToken: token ?? "tok-\(seq)", time: time(minute))
    }

    /// A consume that shows no token, as one of a payment learned from the store.
    static func consumeWithoutToken(_ seq: String, user: String, minute: Int) -> LedgerCommand {
        .consume(paymentSeq: seq, userId: user, purchaseToken: nil, time: time(minute))
    }

    static func time(_ minute: Int) -> Date {
        Fixture.time("2026-03-02T00:00:00Z").addingTimeInterval(Double(minute) * 60)
    }

    /// Every kind of consume outcome, and consumes whose outcomes depend on each other inside one
    /// batch: payments the batch records, one payment consumed twice under its name and an alias
    /// (in both orders), a consume after a refund and a refund after a consume.
    static func commands(sdkToken: String) -> [LedgerCommand] {
        [
            .record(Fixture.consumable("P-1"), kind: .purchase),
            consume("P-1", minute: 1),                                   // consumed
            consume("P-1", minute: 2),                                   // alreadyConsumed (minute 1)
            consume("P-77", user: "ua", token: sdkToken, minute: 3),     // consumed, by the alias
            consume("C-1", user: "ua", token: sdkToken, minute: 4),      // alreadyConsumed, by the name
            consume("C-2", user: "ua", token: "guess", minute: 5),       // TOKEN_INVALID: learned from the store
            consumeWithoutToken("C-2", user: "ua", minute: 6),           // consumed
            consumeWithoutToken("C-2", user: "ua", minute: 7),           // alreadyConsumed
            consume("P-2", minute: 8),                                   // NOT_FOUND: recorded later in the batch
            .record(Fixture.consumable("P-2"), kind: .purchase),
            consume("P-2", user: "u9", minute: 9),                       // USER_INVALID
            consume("P-2", token: "tok-other", minute: 10),              // TOKEN_INVALID: does not match
            .record(Fixture.consumable("P-3"), kind: .purchase),
            .refund(paymentSeq: "P-3", time: time(11), reason: "test"),
            consume("P-3", minute: 12),                                  // REFUNDED
            .record(Fixture.consumable("P-4"), kind: .purchase),
            consume("P-4", minute: 13),                                  // consumed
            .refund(paymentSeq: "P-4", time: time(14), reason: "test"),
            consume("P-4", minute: 15),                                  // alreadyConsumed (minute 13)
            .record(Fixture.subscription("S-1", from: "2026-03-01T00:00:00Z", to: "2026-04-01T00:00:00Z"), kind: .purchase),
            consume("S-1", minute: 16),                                  // NOT_CONSUMABLE
            .record(Fixture.subscription("S-2", type: .consumableAutoRenewable, from: "2026-03-01T00:00:00Z",
                                         to: "2026-04-01T00:00:00Z"), kind: .purchase),
            consume("S-2", minute: 17),                                  // consumed
            consume("P-2", minute: 18),                                  // consumed
            consume("NOPE", minute: 19),                                 // NOT_FOUND
        ]
    }

    /// Everything a caller sees of an outcome.
    static func full(_ outcome: CommandOutcome) -> String {
        let at = outcome.consumedAt.map { Timestamp(clamping: $0).iso8601Milliseconds } ?? "-"
        return "\(outcome.status.rawValue) \(outcome.paymentSeq ?? "-") \(at) \(outcome.error?.code.rawValue ?? "-") \(outcome.error?.message ?? "-")"
    }

    /// The payments' events without positions (which follow the order of appends) and hashes (a
    /// link's event is stamped with the time it was made), links left out: each stream's events.
    static func log(_ c: Connection) throws -> String {
        try c.query("""
            SELECT string_agg(concat_ws(' ', stream, version, type, data::text, occurred_at), E'\\n' ORDER BY stream, version) AS log
              FROM ledger.events WHERE stream LIKE 'payment:%' AND type <> 'PaymentLinked'
            """)[0].decode("log", as: String.self)
    }

    func run(batched: Bool) async throws -> (outcomes: [String], projections: String, log: String) {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let sdk = try learnedFromTheStore(c)
                let commands = Self.commands(sdkToken: sdk.purchaseToken)
                let outcomes = batched ? try c.executeBatch(commands) : try commands.map { try c.run($0) }
                #expect(try ProjectionVerifier(connection: c).verify().isEqual, "the projections equal a replay of the log")
                #expect(try ChainVerifier(connection: c).verify().breaks.isEmpty, "the hash chains hold")
                return (outcomes.map(Self.full), try SetEngineTests.projections(c), try Self.log(c))
            }
        }
    }

    @Test func aBatchOfConsumesGivesTheOutcomesOfOneConsumeAtATime() async throws {
        let alone = try await run(batched: false)
        #expect(alone.outcomes.filter { $0.hasPrefix("consumed") }.count == 6, "\(alone.outcomes)")
        for code in ["NOT_FOUND", "USER_INVALID", "TOKEN_INVALID", "NOT_CONSUMABLE", "REFUNDED"] {
            #expect(alone.outcomes.contains { $0.contains(" \(code) ") }, "no \(code) in \(alone.outcomes)")
        }
        #expect(alone.outcomes[4] == "alreadyConsumed C-1 2026-03-02T00:03:00.000Z - -")
        #expect(alone.outcomes[5].hasSuffix("payment C-2 was learned from the store and has no purchase token: consume it without one"))
        #expect(alone.outcomes[14].hasSuffix("payment P-3 was refunded at 2026-03-02T00:11:00.000Z and was never consumed"))
        let batched = try await run(batched: true)
        for (index, (one, set)) in zip(alone.outcomes, batched.outcomes).enumerated() {
            #expect(one == set, "command \(index): alone \(one), in the batch \(set)")
        }
        #expect(batched.projections == alone.projections)
        #expect(batched.log == alone.log, "the same events at the same times")
    }

    /// The plan sends a round's consumes as one statement, and keeps them after the refund
    /// before them and before the refund after them.
    @Test func aRoundsConsumesGoAsOneStatement() async throws {
        let commands = Self.commands(sdkToken: "tok-P-77")
        let isConsume = { (index: Int) -> Bool in if case .consume = commands[index] { true } else { false } }
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let steps = try c.batchSteps(commands)
                let position = Dictionary(uniqueKeysWithValues: steps.flatMap { $0 }.enumerated().map { ($1, $0) })
                let sets = steps.filter { $0.count > 1 && isConsume($0[0]) }
                #expect(!sets.isEmpty, "\(steps)")
                #expect(sets.allSatisfy { $0.allSatisfy(isConsume) })
                // The alias and the name of C-1 in one set: ledger.apply_consumes keeps their order.
                #expect(sets.contains { $0.contains(3) && $0.contains(4) }, "\(steps)")
                #expect(steps.count < commands.count - 6, "\(steps)")
                for (refund, consume) in [(13, 14), (16, 17), (17, 18)] {
                    #expect(position[refund]! < position[consume]!, "command \(refund) must run before \(consume)")
                }
            }
        }
    }

    /// One set names one payment under its name and under an alias, several times: the items run
    /// as if one after the other, in input order (`ledger.consume_batch` called directly).
    @Test func oneSetConsumingAPaymentUnderTwoNamesHandsItOutOnce() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                _ = try learnedFromTheStore(c)
                // The items as the library writes them; the token is P-77's (an ASCII text).
                let rows = try c.query("""
                    SELECT status, code, payment_seq, consumed_at FROM ledger.consume_batch((
                        SELECT jsonb_agg(jsonb_build_object('paymentSeq', seq, 'userId', usr, 'time', at,
                                                            'purchaseTokenSha256', encode(sha256('tok-P-77'::bytea), 'hex')) ORDER BY n)
                          FROM (VALUES (1, 'C-1', 'ua', '2026-03-02 00:01:00+00'), (2, 'P-77', 'ua', '2026-03-02 00:02:00+00'),
                                       (3, 'P-77', 'ub', '2026-03-02 00:03:00+00'), (4, 'C-1', 'ua', '2026-03-02 00:04:00+00'))
                               AS items(n, seq, usr, at)))
                    """)
                #expect(try rows.map { try "\($0.decode("status", as: String.self)) \($0.decode("code", as: String?.self) ?? "-") \($0.decode("payment_seq", as: String.self))" }
                        == ["consumed - C-1", "alreadyConsumed - P-77", "rejected USER_INVALID P-77", "alreadyConsumed - C-1"])
                #expect(try rows.dropFirst().first?.decode("consumed_at", as: Date?.self) == Fixture.time("2026-03-02T00:01:00Z"))
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'PaymentConsumed'") == 1)
                #expect(try c.count("SELECT count(*) FROM ledger.consume_batch('[]')") == 0)
                #expect(try ProjectionVerifier(connection: c).verify().isEqual)
            }
        }
    }

    /// The set functions, called directly with anything but an array, refuse it by the argument's
    /// name (SQLSTATE 22023) and write nothing, where jsonb_array_elements gave its own error.
    @Test(arguments: ["ledger.record_payments", "ledger.consume_batch"])
    func aSetThatIsNotAnArrayIsRefusedByName(function: String) async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                for (input, kind) in [("'{\"kind\":\"purchase\"}'::jsonb", "object"), ("'\"x\"'::jsonb", "string"), ("NULL::jsonb", "null")] {
                    let error = try #require(throws: PostgresError.self) {
                        try c.query(SQL(unsafeSQL: "SELECT * FROM \(function)(\(input))"))
                    }
                    #expect(error.sqlState == SQLState("22023"), "\(function)(\(input)): \(error)")
                    #expect(error.message.hasPrefix("p_items must be a JSON array of"), "\(error.message)")
                    #expect(error.message.hasSuffix("not \(kind)"), "\(error.message)")
                }
                #expect(try c.count("SELECT count(*) FROM ledger.events") == 0)
            }
        }
    }

    /// Four writers consume the same 40 payments at once, each in its own shuffled order and in
    /// batches: every payment is handed out exactly once, and no batch deadlocks.
    @Test func concurrentSetsHandEachPaymentOutOnce() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let payments: [LedgerCommand] = (0..<40).map { .record(Fixture.consumable("P-\($0)"), kind: .purchase) }
                #expect(try c.executeBatch(payments).allSatisfy { $0.status == .recorded })
            }
            let writers = (0..<4).map { writer in
                Background { () throws -> Int in
                    let c = try db.connect()
                    defer { c.close() }
                    var generator = SystemRandomNumberGenerator()
                    let order = (0..<40).shuffled(using: &generator)
                    var consumed = 0
                    for start in stride(from: 0, to: 40, by: 10) {
                        let batch = order[start..<start + 10].map { Self.consume("P-\($0)", minute: writer) }
                        consumed += try c.executeBatch(batch).filter { $0.status == .consumed }.count
                    }
                    return consumed
                }
            }
            var consumed = 0
            for writer in writers {
                let handedOut = try await writer.value(timeout: 600)
                #expect(handedOut != nil, "a writer did not finish")
                consumed += handedOut ?? 0
            }
            #expect(consumed == 40)
            try db.withConnection { c throws in
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'PaymentConsumed'") == 40)
                #expect(try ProjectionVerifier(connection: c).verify().isEqual)
            }
        }
    }
}
