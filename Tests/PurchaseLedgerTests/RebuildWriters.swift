import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger

/// Writers that run every kind of ledger command, one command per transaction, each on its own
/// thread and connection, until stopped (bounded in commands and time). They record every
/// answer that is not the expected one.
final class RebuildWriters: @unchecked Sendable {
    // @unchecked: the mutable state is guarded by `lock`.
    private let lock = NSLock()
    private var stopping = false
    private var done = 0
    private var problems: [String] = []
    private let group = DispatchGroup()
    private let database: TestDatabase
    private let count: Int
    private let maxIterations: Int
    private let deadline: Date

    /// `seconds` bounds a writer that nobody stops (a test that ends early); a test stops them
    /// itself. The bound is well above a rebuild under the whole suite's load (in CI, several
    /// minutes), or the writers end by the clock before its swap and the test finds nothing to
    /// catch up and no writer after it.
    init(_ database: TestDatabase, count: Int, maxIterations: Int = 100_000, seconds: TimeInterval = 1_200) {
        self.database = database
        self.count = count
        self.maxIterations = maxIterations
        self.deadline = Date().addingTimeInterval(seconds)
    }

    /// Commands answered so far.
    var commands: Int { lock.withLock { done } }
    /// Unexpected answers and errors.
    var failures: [String] { lock.withLock { problems } }

    func start() {
        for writer in 0..<count {
            group.enter()
            DispatchQueue.global().async { [self] in
                defer { group.leave() }
                do {
                    let c = try database.connect()
                    defer { c.close() }
                    for i in 0..<maxIterations where !lock.withLock({ stopping }) && Date() < deadline {
                        try iteration(c, writer, i)
                    }
                } catch {
                    lock.withLock { problems.append("writer \(writer): \(error)") }
                }
            }
        }
    }

    /// Waits until `commands` answers were counted (false after `timeout` seconds).
    func waitFor(commands target: Int, timeout: TimeInterval = 60) async throws -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while commands < target {
            if Date() > end { return false }
            try await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// Stops the writers and waits for them.
    func stop() async throws {
        lock.withLock { stopping = true }
        while group.wait(timeout: .now()) != .success { try await Task.sleep(for: .milliseconds(5)) }
    }

    private func iteration(_ c: Connection, _ writer: Int, _ i: Int) throws {
        let user = "w\(writer)", seq = "W\(writer)-\(i)"
        try expect(c, .record(Fixture.consumable(seq, user: user, store: i % 2 == 0 ? .appStore : .googlePlay), kind: .purchase), .recorded)
        if i > 0 {
            try expect(c, .consume(paymentSeq: "W\(writer)-\(i - 1)", userId: user, purchaseToken: "tok-W\(writer)-\(i - 1)", time: nil), .consumed)
        }
        // A refund after the goods were handed out: recorded, and the payment stays consumed.
        if i % 5 == 1 { try expect(c, .refund(paymentSeq: "W\(writer)-\(i - 1)", time: nil, reason: "customer"), .recorded) }
        if i % 8 == 0 {
            let sub = Fixture.subscription("S\(seq)", user: user, type: i % 16 == 0 ? .autoRenewable : .consumableAutoRenewable,
                                           from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z")
            try expect(c, .record(sub, kind: .purchase), .recorded)
            try expect(c, .cancel(storeCode: .appStore, originalTransactionId: "T-S\(seq)", time: Fixture.time("2026-01-10T00:00:00Z")), .recorded)
        }
        if i % 13 == 0 {
            try expect(c, .restore(userId: user, storeCode: .appStore, time: nil,
                                   purchases: [Fixture.consumable("R\(seq)", user: user)]), .restored)
        }
    }

    private func expect(_ c: Connection, _ command: LedgerCommand, _ status: CommandOutcome.Status) throws {
        let outcome = try c.run(command)
        lock.withLock {
            done += 1
            if outcome.status != status { problems.append("\(command.paymentSeq ?? "?"): \(outcome.status) \(outcome.error.map { "\($0)" } ?? "")") }
        }
    }
}
