import DequeModule
import Synchronization

/// Group commit: concurrent calls on one ``Ledger`` share transactions.
///
/// At most `maxConcurrentBatches` batches run at once. A call that finds a free slot runs at
/// once, with every call waiting at that moment (up to `maxBatchSize` in all), as one batch: one
/// transaction, one round trip, one commit. Calls that find no slot wait; when a batch ends,
/// its leader hands the slot to the first of them, which takes everything waiting by then. A
/// lone call therefore never waits for company, and under load batches grow by themselves.
///
/// Each call still gets its own outcome or error: the batch runner (``Ledger``) returns one
/// result per command, in order.
final class GroupCommit: Sendable {
    typealias Runner = @Sendable ([LedgerCommand]) async -> [Result<CommandOutcome, any Error>]

    let maxBatchSize: Int
    let maxConcurrentBatches: Int
    private let state = Mutex(State())

    private struct State {
        var running = 0
        var waiting: Deque<Waiter> = []
    }

    private struct Waiter {
        let command: LedgerCommand
        let continuation: CheckedContinuation<Turn, Never>
    }

    /// What a waiting call is woken with: its result, or the slot of a batch that ended.
    private enum Turn: Sendable {
        case done(Result<CommandOutcome, any Error>)
        case lead
    }

    init(maxBatchSize: Int, maxConcurrentBatches: Int) {
        self.maxBatchSize = max(1, maxBatchSize)
        self.maxConcurrentBatches = max(1, maxConcurrentBatches)
    }

    /// Runs `command` in a batch with whatever else is waiting, through `run`.
    func execute(_ command: LedgerCommand, run: Runner) async throws -> CommandOutcome {
        let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
            let lead = state.withLock { state in
                guard state.running < maxConcurrentBatches else {
                    state.waiting.append(Waiter(command: command, continuation: continuation))
                    return false
                }
                state.running += 1
                return true
            }
            if lead { continuation.resume(returning: .lead) }
        }
        switch turn {
        case .done(let result):
            return try result.get()
        case .lead:
            let others = state.withLock { state in
                var taken: [Waiter] = []
                while taken.count < maxBatchSize - 1, let next = state.waiting.popFirst() { taken.append(next) }
                return taken
            }
            let results = await run([command] + others.map(\.command))
            for (waiter, result) in zip(others, results.dropFirst()) {
                waiter.continuation.resume(returning: .done(result))
            }
            let next = state.withLock { state -> Waiter? in
                if let next = state.waiting.popFirst() { return next }
                state.running -= 1
                return nil
            }
            next?.continuation.resume(returning: .lead)
            return try results[0].get()
        }
    }
}
