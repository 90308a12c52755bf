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
    ///
    /// With `cancellable`, cancelling the calling task also stops the body's work on the server: the
    /// statement running then is cancelled (`PQcancel` from the cancelling thread), the body's later
    /// statements are refused before they are sent, a transaction opened by `transaction(_:)` rolls
    /// back, and the connection goes back to the pool, usable. The call then throws
    /// `CancellationError`. Without it (the default) a body, once started, runs to its end: a
    /// command shared by several callers must not stop because one of them went away.
    public func withConnection<T: Sendable>(cancellable: Bool = false,
                                            _ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        while true {
            let pooled = try await checkOut()
            let cancellation = cancellable ? StatementCancellation(key: pooled.connection.cancelKey) : nil
            let outcome: Outcome<T> = await withTaskCancellationHandler {
                await pooled.run { connection in
                    guard connection.checkIdleConnection() else {
                        connection.close()
                        return .stale
                    }
                    guard cancellation?.start() ?? true else { return .finished(.failure(CancellationError()), reusable: true) }
                    connection.cancellation = cancellation
                    let result = Result { try body(connection) }
                    cancellation?.finish()
                    connection.cancellation = nil
                    if connection.isBroken { connection.close() }
                    return .finished(result, reusable: !connection.isBroken)
                }
            } onCancel: {
                cancellation?.cancel()
            }
            switch outcome {
            case .stale:
                checkIn(nil)  // the server closed it while idle; the body has not run, so take another
            case .finished(let result, let reusable):
                checkIn(reusable ? pooled : nil)
                if case .failure = result, cancellation?.isCancelled == true { throw CancellationError() }
                return try result.get()
            }
        }
    }

    /// Runs `body` inside `Connection.transaction(_:)`: committed when it returns, rolled back when it throws
    /// (the body's error is rethrown unchanged). The body is synchronous, so it cannot suspend mid-transaction.
    /// `cancellable` as in ``withConnection(cancellable:_:)``.
    public func withTransaction<T: Sendable>(cancellable: Bool = false,
                                             _ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await withConnection(cancellable: cancellable) { try $0.transaction(body) }
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
