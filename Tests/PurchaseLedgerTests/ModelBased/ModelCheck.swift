import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// One seed's stream, what the reference model expects of it, and the comparisons every way of
/// applying it must pass: each command's outcome in input order, the projections of every user
/// (`unconsumed`, `subscriptions --include-expired` at instants across the stream's year), and
/// `verify` (projections against a replay of the log, and the log's hash chains).
struct ModelCheck: Sendable {
    let seed: UInt64
    let items: [StreamItem]
    let expected: [ExpectedOutcome]
    let users: [String]
    let unconsumed: [String: [UnconsumedRow]]
    let subscriptions: [String: [[SubscriptionRow]]]

    /// Where subscriptions are evaluated: every 25 days from the stream's start, at 11:00.
    static let instants: [Date] = (0..<13).map {
        CommandStreamGenerator.epoch.addingTimeInterval(Double($0) * 25 * CommandStreamGenerator.day + 11 * 3_600)
    }

    /// Mismatches reported one by one at most; the rest are counted.
    static let reportLimit = 12

    init(seed: UInt64, length: Int = ModelSeed.streamLength) {
        var generator = CommandStreamGenerator(seed: seed)
        let items = generator.generate(count: length)
        var model = ReferenceModel()
        self.seed = seed
        self.items = items
        expected = items.map { model.apply($0) }
        users = generator.users
        unconsumed = Dictionary(uniqueKeysWithValues: users.map { ($0, model.unconsumed(userId: $0)) })
        subscriptions = Dictionary(uniqueKeysWithValues: users.map { user in
            (user, Self.instants.map { model.subscriptions(userId: user, at: $0) })
        })
    }

    /// How a failure names the run: the seed (for `LEDGER_MODEL_SEED`) and the way it was applied.
    func context(_ mode: String) -> String { "seed \(ModelSeed.text(seed)), \(mode)" }

    /// Each command's outcome against the model's, in input order.
    func checkOutcomes(_ observed: [Result<CommandOutcome, any Error>], mode: String) {
        #expect(observed.count == items.count, "\(context(mode)): \(observed.count) outcomes for \(items.count) commands")
        var mismatches = 0
        for (index, result) in observed.enumerated() where index < items.count {
            let problem: String?
            switch result {
            case .success(let outcome):
                let got = ExpectedOutcome(observed: outcome)
                problem = got == expected[index] ? nil : "expected \(expected[index]), got \(got)"
                    + (outcome.error.map { " (\($0.message))" } ?? "")
            case .failure(let error):
                problem = "expected \(expected[index]), the call threw \(error)"
            }
            guard let problem else { continue }
            mismatches += 1
            if mismatches <= Self.reportLimit {
                Issue.record("\(context(mode)): command #\(index + 1) \(items[index].line.prefix(600)): \(problem)")
            }
        }
        if mismatches > Self.reportLimit {
            Issue.record("\(context(mode)): \(mismatches) commands in all differ from the model")
        }
    }

    /// Every user's projections, read through the library's queries, against the model's.
    func checkProjections(_ ledger: Ledger, mode: String) async throws {
        var mismatches = 0
        func report(_ text: String) {
            mismatches += 1
            if mismatches <= Self.reportLimit { Issue.record("\(context(mode)): \(text)") }
        }
        for user in users {
            let rows = try await ledger.unconsumed(userId: user).map(UnconsumedRow.init)
            if rows != unconsumed[user] ?? [] {
                report("unconsumed --user \(user): expected \(unconsumed[user] ?? []), got \(rows)")
            }
            for (instant, expectedRows) in zip(Self.instants, subscriptions[user] ?? []) {
                let rows = try await ledger.subscriptions(userId: user, at: instant, includeExpired: true).map(SubscriptionRow.init)
                if rows != expectedRows {
                    report("subscriptions --user \(user) --at \(Timestamp(instant).iso8601Milliseconds) --include-expired: "
                           + "expected \(expectedRows), got \(rows)")
                }
            }
        }
        if mismatches > Self.reportLimit { Issue.record("\(context(mode)): \(mismatches) projection reads in all differ from the model") }
    }

    /// `verify` and `verify --chain` after the run.
    func checkVerify(_ db: TestDatabase, mode: String) throws {
        try db.withConnection { c throws in
            let report = try ProjectionVerifier(connection: c).verify()
            #expect(report.isEqual, "\(context(mode)): projections differ from a replay of the log: \(report.differingRows)")
            let chain = try ChainVerifier(connection: c).verify()
            #expect(chain.isIntact, "\(context(mode)): the log's chains are broken: \(chain.breaks.prefix(3))")
        }
    }

    /// All three checks, on a database the stream was applied to.
    func checkAll(_ observed: [Result<CommandOutcome, any Error>], _ db: TestDatabase, mode: String) async throws {
        checkOutcomes(observed, mode: mode)
        let ledger = Ledger(databaseURL: db.conninfo, poolSize: 2, stores: GoogleNotice.stores)
        do {
            try await checkProjections(ledger, mode: mode)
        } catch {
            await ledger.close()
            throw error
        }
        await ledger.close()
        try checkVerify(db, mode: mode)
    }
}
