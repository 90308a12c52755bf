import Synchronization

/// The off switch of one use of a connection: the caller's task throws it from any thread, and
/// the connection's thread checks it before each statement.
///
/// Thrown while the use runs, it sends the server a cancel request (``CancelKey``) for the
/// statement running then, and every later statement of the use is refused before it is sent
/// (``PostgresError/cancelled``), so a request that landed between two statements (which the
/// server ignores) still stops the use. Thrown before the use starts, the use does not run.
/// The request goes out under the switch's lock and ``finish()`` takes the lock, so no request
/// leaves after the use ended and reaches the next user of the connection.
final class StatementCancellation: Sendable {
    private let key: CancelKey?
    private let state = Mutex(State())

    private struct State {
        var running = false
        var cancelled = false
    }

    init(key: CancelKey?) {
        self.key = key
    }

    /// Throws the switch: cancels the statement running now, if any, and refuses the rest.
    func cancel() {
        state.withLock { state in
            state.cancelled = true
            if state.running { _ = key?.send() }
        }
    }

    /// Called on the connection's thread before the use; false when it was cancelled already.
    func start() -> Bool {
        state.withLock { state in
            state.running = !state.cancelled
            return state.running
        }
    }

    /// Called on the connection's thread after the use: later cancels send nothing.
    func finish() {
        state.withLock { $0.running = false }
    }

    /// True once the switch was thrown.
    var isCancelled: Bool {
        state.withLock { $0.cancelled }
    }
}
