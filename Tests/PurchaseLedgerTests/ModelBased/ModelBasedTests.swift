import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// The model-based test: a random stream of contract commands (see
/// ``CommandStreamGenerator``), applied to a fresh ledger in four ways, must give, every way,
/// exactly the outcomes and projections of the in-test ``ReferenceModel`` of docs/contract.md, and
/// pass `verify` afterwards. Seeds are fixed (``ModelSeed``); `LEDGER_MODEL_SEED` replays
/// others, and every failure names its seed.
@Suite("Model-based: every way of applying a stream agrees with the contract's model")
struct ModelBasedTests {
    /// The ingest path: the stream as NDJSON lines, one batch (one transaction) for all of them.
    @Test(arguments: ModelSeed.seeds)
    func oneBigIngestBatchMatchesTheModel(seed: UInt64) async throws {
        let check = ModelCheck(seed: seed)
        let lines = check.items.map(\.line)
        // The lines mean the generated commands (a restore with another user's item is refused
        // by the decoder, as the contract says, and is left out of this comparison).
        for (index, line) in lines.enumerated() {
            if let decoded = try? LedgerCommand(line: Array(line.utf8), stores: GoogleNotice.stores), decoded != check.items[index].command {
                Issue.record("\(check.context("ingest")): line #\(index + 1) decodes to another command: \(line)")
            }
        }
        try await TestDatabase.with { db in
            let outcomes = try db.withConnection { c in try c.ingest(lines, batchSize: lines.count, stores: GoogleNotice.stores) }
            try await check.checkAll(outcomes.map { .success($0) }, db, mode: "one ingest batch of \(lines.count)")
        }
    }

    /// The library's batches: the stream cut into consecutive batches of 1 to 40 commands, each
    /// one transaction (`executeBatch`, what group commit sends).
    @Test(arguments: ModelSeed.seeds)
    func batchesOfRandomSizesMatchTheModel(seed: UInt64) async throws {
        let check = ModelCheck(seed: seed)
        var random = StreamRandom(seed: seed ^ 0xBA7C_0000)
        var sizes: [Int] = []
        try await TestDatabase.with { db in
            var outcomes: [Result<CommandOutcome, any Error>] = []
            try db.withConnection { c throws in
                var start = 0
                while start < check.items.count {
                    let end = min(check.items.count, start + random.int(1...40))
                    sizes.append(end - start)
                    let batch = check.items[start..<end].map(\.command)
                    do {
                        outcomes += try c.executeBatch(batch).map { .success($0) }
                    } catch {
                        outcomes += batch.map { _ in .failure(error) }
                    }
                    start = end
                }
            }
            try await check.checkAll(outcomes, db, mode: "batches of sizes \(sizes)")
        }
    }

    /// One `Ledger.execute` at a time, each waiting for the one before.
    @Test(arguments: ModelSeed.seeds)
    func oneCommandAtATimeMatchesTheModel(seed: UInt64) async throws {
        let check = ModelCheck(seed: seed)
        try await TestDatabase.with { db in
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 2)
            var outcomes: [Result<CommandOutcome, any Error>] = []
            for command in check.items.map(\.command) {
                do { outcomes.append(.success(try await ledger.execute(command))) } catch { outcomes.append(.failure(error)) }
            }
            await ledger.close()
            try await check.checkAll(outcomes, db, mode: "one command at a time")
        }
    }

    /// Eight writers on one `Ledger` (group commit), each with the commands of its own users,
    /// payments, lineages and products (``WriterPartition``), in their input order.
    @Test(arguments: ModelSeed.seeds)
    func eightConcurrentWritersMatchTheModel(seed: UInt64) async throws {
        let check = ModelCheck(seed: seed)
        let partition = WriterPartition(check.items, writers: 8)
        let busy = partition.writers.filter { !$0.isEmpty }.count
        try #require(busy >= 4, "\(check.context("8 writers")): the stream split into \(busy) independent parts only")
        try await TestDatabase.with { db in
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 8)
            let commands = check.items.map(\.command)
            let results = await withTaskGroup(of: [(Int, Result<CommandOutcome, any Error>)].self) { group in
                for indices in partition.writers {
                    group.addTask {
                        var mine: [(Int, Result<CommandOutcome, any Error>)] = []
                        for index in indices {
                            do { mine.append((index, .success(try await ledger.execute(commands[index])))) } catch {
                                mine.append((index, .failure(error)))
                            }
                        }
                        return mine
                    }
                }
                return await group.reduce(into: [Int: Result<CommandOutcome, any Error>]()) { all, mine in
                    for (index, result) in mine { all[index] = result }
                }
            }
            await ledger.close()
            let outcomes = commands.indices.map { results[$0] ?? .failure(TestSetupError("command #\($0 + 1) was never run")) }
            try await check.checkAll(outcomes, db, mode: "8 concurrent writers of \(partition.writers.map(\.count)) commands")
        }
    }

    /// The streams exercise every status and every refusal the model knows, so that agreeing
    /// with the model means something.
    @Test(arguments: ModelSeed.seeds)
    func theStreamCoversEveryOutcome(seed: UInt64) {
        let check = ModelCheck(seed: seed)
        let statuses = Set(check.expected.map(\.status))
        let codes = Set(check.expected.compactMap(\.code))
        let wanted: Set<CommandOutcome.Status> = [.recorded, .duplicate, .consumed, .alreadyConsumed, .restored, .rejected,
                                                  .parked, .ignored]
        let wantedCodes: Set<LedgerError.Code> = [.userInvalid, .productInvalid, .paymentConflict, .notFound,
                                                   .tokenInvalid, .notConsumable, .refunded, .invalidInput]
        #expect(statuses.isSuperset(of: wanted), "seed \(ModelSeed.text(seed)): no \(wanted.subtracting(statuses))")
        #expect(codes.isSuperset(of: wantedCodes), "seed \(ModelSeed.text(seed)): no \(wantedCodes.subtracting(codes))")
        // And not only rarely: at least two of each refusal.
        for code in wantedCodes {
            let count = check.expected.filter { $0.code == code }.count
            #expect(count >= 2, "seed \(ModelSeed.text(seed)): \(code.rawValue) only \(count) times")
        }
        // Renewals delivered before the payment they follow.
        var seen: Set<String> = []
        var outOfOrder = 0
        for (item, outcome) in zip(check.items, check.expected) where outcome.status == .recorded {
            guard case .record(let payment, _) = item.command, let lineage = payment.lineageId else { continue }
            if payment.isRenewal && !seen.contains("\(payment.storeCode.rawValue):\(lineage)") { outOfOrder += 1 }
            seen.insert("\(payment.storeCode.rawValue):\(lineage)")
        }
        #expect(outOfOrder > 0, "seed \(ModelSeed.text(seed)): no renewal recorded before its lineage's first purchase")
        let kinds = Set(check.items.map { "\($0.command)".prefix { $0 != "(" } })
        #expect(kinds == ["record", "consume", "refund", "cancel", "restore", "product", "notification"],
                "seed \(ModelSeed.text(seed)): \(kinds)")
        #expect(!Self.voidedSubscriptionPayments(check).isEmpty, "seed \(ModelSeed.text(seed)): no voided subscription payment")
        // Billing states the stores set, as the model reads them at the checked instants.
        let states = Set(check.subscriptions.values.flatMap { $0.flatMap { $0.map(\.status) } })
        #expect(states.isSuperset(of: [.active, .expired, .revoked]) && !states.isDisjoint(with: [.inGracePeriod, .onHold, .paused]),
                "seed \(ModelSeed.text(seed)): subscription states seen: \(states)")
    }

    /// A REVOKED of a token whose lineage has a payment holding another token (§5.3: the
    /// lineage's latest payment is refunded): Google notifications are few in a stream, so the
    /// seeds together must hold one, not each.
    @Test func theSeedsRevokeALineageWithTwoTokens() {
        let found = ModelSeed.seeds.map { Self.revokedAcrossTokens(ModelCheck(seed: $0)).count }
        #expect(found.reduce(0, +) > 0, "REVOKED of a lineage with two tokens per seed: \(found)")
    }

    /// The stream's Google Play payments.
    static func googlePayments(_ check: ModelCheck) -> [Payment] {
        check.items.compactMap { item -> Payment? in
            if case .record(let payment, _) = item.command, payment.storeCode == .googlePlay { payment } else { nil }
        }
    }

    /// The notifications the model applies, at once or when their payment comes.
    static func appliedNotices(_ check: ModelCheck) -> [GoogleNotice] {
        zip(check.items, check.expected).compactMap { item, outcome in
            outcome.status == .recorded || outcome.status == .parked ? item.google : nil
        }
    }

    /// Voided purchases of a subscription's payment (only that order is refunded).
    static func voidedSubscriptionPayments(_ check: ModelCheck) -> [GoogleNotice] {
        let payments = googlePayments(check)
        return appliedNotices(check).filter { notice in
            guard case .voided(let orderId) = notice.kind else { return false }
            return payments.contains { $0.transactionId == orderId && $0.productType != .consumable }
        }
    }

    /// REVOKEDs of a token whose lineage has a payment holding another token.
    static func revokedAcrossTokens(_ check: ModelCheck) -> [GoogleNotice] {
        let payments = googlePayments(check)
        return appliedNotices(check).filter { notice in
            guard case .subscription(12) = notice.kind,
                  let lineage = payments.first(where: { $0.purchaseToken == notice.purchaseToken })?.lineageId else { return false }
            return payments.contains { $0.lineageId == lineage && $0.purchaseToken != notice.purchaseToken }
        }
    }
}
