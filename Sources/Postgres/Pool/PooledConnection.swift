import Dispatch

/// A connection and the serial queue that every use of it runs on, so blocking libpq calls never occupy
/// Swift's cooperative thread pool and the connection is used by one thread at a time.
final class PooledConnection: Sendable {
    let connection: Connection
    let queue: DispatchQueue

    private init(connection: Connection, queue: DispatchQueue) {
        self.connection = connection
        self.queue = queue
    }

    /// Connects (`Connection.connect`, which blocks) on the new connection's own queue.
    static func open(_ configuration: ConnectionConfiguration) async throws -> PooledConnection {
        let queue = DispatchQueue(label: "Postgres.Connection")
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { PooledConnection(connection: try .connect(configuration), queue: queue) })
            }
        }
    }

    /// Runs `work` on the connection's queue and returns its value.
    func run<R: Sendable>(_ work: @escaping @Sendable (Connection) -> R) async -> R {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work(self.connection)) }
        }
    }
}
