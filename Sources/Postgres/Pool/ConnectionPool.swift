import DequeModule
import Synchronization

/// At most `size` connections shared by concurrent tasks.
///
/// Connections are opened lazily; callers beyond `size` wait in FIFO order without spinning, and a waiting
/// task that is cancelled throws `CancellationError`. Each body runs synchronously on its connection's own
/// serial queue. A connection that is broken after a body, or found dead before one, is closed and replaced
/// by a fresh one on a later call. Nothing is retried: the caller decides what is safe to run again.
public final class ConnectionPool: Sendable {
    let configuration: ConnectionConfiguration
    let size: Int
    let state = Mutex(State())

    struct State {
        var idle: [PooledConnection] = []
        /// Connections open or being opened, idle or checked out.
        var open = 0
        /// Callers waiting for a connection, first come first served.
        var waiters: Deque<Waiter> = []
        var nextWaiterID = 0
        var isClosed = false
    }

    struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<Lease, any Error>
    }

    /// What a caller gets from the pool: an idle connection, or the right to open a new one.
    enum Lease: Sendable {
        case idle(PooledConnection)
        case create
    }

    /// A pool that opens up to `size` (at least 1) connections with `configuration`.
    public init(configuration: ConnectionConfiguration, size: Int = 4) {
        self.configuration = configuration
        self.size = max(1, size)
    }

    /// Runs `body` with a connection, on that connection's serial queue, and returns its value.
    ///
    /// Errors thrown by `body` are rethrown unchanged. Throws `.client` "pool closed" after `close()`,
    /// `.connection` when a new connection cannot be opened, `CancellationError` when cancelled while waiting.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        while true {
            let pooled = try await checkOut()
            let outcome: Outcome<T> = await pooled.run { connection in
                guard connection.checkIdleConnection() else {
                    connection.close()
                    return .stale
                }
                let result = Result { try body(connection) }
                if connection.isBroken { connection.close() }
                return .finished(result, reusable: !connection.isBroken)
            }
            switch outcome {
            case .stale:
                checkIn(nil)  // the server closed it while idle; the body has not run, so take another
            case .finished(let result, let reusable):
                checkIn(reusable ? pooled : nil)
                return try result.get()
            }
        }
    }

    /// Runs `body` inside `Connection.transaction(_:)`: committed when it returns, rolled back when it throws
    /// (the body's error is rethrown unchanged). The body is synchronous, so it cannot suspend mid-transaction.
    public func withTransaction<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await withConnection { try $0.transaction(body) }
    }

    /// Closes the idle connections and refuses later calls (`.client` "pool closed"); connections in use are
    /// closed when their bodies finish. Waiting callers get the same error.
    public func close() async {
        let (idle, waiters) = state.withLock { state in
            state.isClosed = true
            defer { state.idle = []; state.waiters = [] }
            state.open -= state.idle.count
            return (state.idle, state.waiters)
        }
        for waiter in waiters { waiter.continuation.resume(throwing: PostgresError.poolClosed) }
        for pooled in idle { await pooled.run { $0.close() } }
    }

    private enum Outcome<T: Sendable>: Sendable {
        case stale
        case finished(Result<T, any Error>, reusable: Bool)
    }
}
