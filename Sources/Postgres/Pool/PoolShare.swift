import DequeModule
import Synchronization

/// The part of a ``ConnectionPool`` that one kind of work may hold: its callers have at most
/// `limit` of the pool's connections at once, and wait in FIFO order for one of those, so the
/// rest of the pool stays free for everyone else (long reports beside short commands).
///
/// A caller waits here first, without holding anything, then takes a connection from the pool
/// as any caller does. A waiting task that is cancelled throws `CancellationError`.
public final class PoolShare: Sendable {
    /// The pool it is a part of.
    public let pool: ConnectionPool
    /// Connections its callers hold at most at once (at least 1).
    public let limit: Int
    private let state = Mutex(State())

    private struct State {
        var inUse = 0
        var waiters: Deque<(id: Int, continuation: CheckedContinuation<Void, any Error>)> = []
        var nextWaiterID = 0
    }

    /// A share of at most `limit` (at least 1) of `pool`'s connections.
    public init(of pool: ConnectionPool, limit: Int) {
        self.pool = pool
        self.limit = max(1, limit)
    }

    /// ``ConnectionPool/withConnection(cancellable:_:)`` once fewer than `limit` of this share's
    /// callers hold a connection.
    public func withConnection<T: Sendable>(cancellable: Bool = false,
                                            _ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await enter()
        defer { leave() }
        return try await pool.withConnection(cancellable: cancellable, body)
    }

    /// Callers inside the share now (holding or taking a connection), and callers waiting to enter.
    public var statistics: (inUse: Int, waiting: Int) {
        state.withLock { ($0.inUse, $0.waiters.count) }
    }

    /// Enters now, or queues a continuation that `leave` resumes in FIFO order.
    private func enter() async throws {
        let id = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: Result<Void, any Error>? = state.withLock { state in
                    // Checked under the lock: a cancellation after this point finds the waiter in `onCancel`.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.inUse < limit {
                        state.inUse += 1
                        return .success(())
                    }
                    state.waiters.append((id: id, continuation: continuation))
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                state.waiters.firstIndex { $0.id == id }.map { state.waiters.remove(at: $0) }
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Hands the place to the first waiter, if any.
    private func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            if state.waiters.isEmpty {
                state.inUse -= 1
                return nil
            }
            return state.waiters.removeFirst().continuation
        }
        next?.resume()
    }
}
