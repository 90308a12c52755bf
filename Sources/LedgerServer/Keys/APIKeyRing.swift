import Foundation
import Postgres
import Synchronization

/// The keys in force, as the server last read them from the database. A presented key is hashed
/// and its digest compared with every live digest in constant time, without stopping at a match.
///
/// Two rules say when the keys are read again. A known key is trusted while the keys are younger
/// than `refreshInterval`, so a revoked key stops working within that time. An unknown key is
/// looked up in keys read after its request arrived, so a key made before the request (however
/// recently the keys were read) works at once. Reads are shared: one runs at a time, a request
/// that needs keys newer than the read in flight waits for it and then starts (or joins) the
/// next, so a flood of unknown keys costs one read after another, not one read each.
final class APIKeyRing: Sendable {
    private let pool: ConnectionPool
    private let refreshInterval: Duration
    private let state = Mutex(State())

    private struct State {
        var keys: [LiveAPIKey] = []
        /// When the read that gave `keys` began: they hold every key made before then.
        var readAt: ContinuousClock.Instant?
        /// The read in flight and when it began.
        var reading: (startedAt: ContinuousClock.Instant, task: Task<[LiveAPIKey], any Error>)?
    }

    init(pool: ConnectionPool, refreshInterval: Duration) {
        self.pool = pool
        self.refreshInterval = refreshInterval
    }

    /// The id and role of the key, or nil when it is not a live key. Throws when the keys cannot
    /// be read (the database is unreachable).
    func identify(_ key: String) async throws -> (id: Int64, role: APIKeyRole)? {
        let arrived = ContinuousClock.now
        let digest = APIKey.digest(key)
        if let match = Self.match(digest, in: try await keys(readSince: arrived - refreshInterval)) { return match }
        return Self.match(digest, in: try await keys(readSince: arrived))
    }

    /// Compares with every live digest, without stopping at a match.
    private static func match(_ digest: [UInt8], in keys: [LiveAPIKey]) -> (id: Int64, role: APIKeyRole)? {
        var match: (id: Int64, role: APIKeyRole)?
        for live in keys where APIKey.constantTimeEqual(live.digest, digest) {
            match = (live.id, live.role)
        }
        return match
    }

    /// Keys from a read that began at or after `instant`: the ones held, the read in flight, or
    /// a new read once the one in flight (which began too early) is done.
    private func keys(readSince instant: ContinuousClock.Instant) async throws -> [LiveAPIKey] {
        enum Next {
            case held([LiveAPIKey])
            case wait(Task<[LiveAPIKey], any Error>, recentEnough: Bool)
        }
        while true {
            let next: Next = state.withLock { state in
                if let readAt = state.readAt, readAt >= instant { return .held(state.keys) }
                if let reading = state.reading { return .wait(reading.task, recentEnough: reading.startedAt >= instant) }
                let startedAt = ContinuousClock.now
                let task = Task { try await self.read(startedAt: startedAt) }
                state.reading = (startedAt, task)
                return .wait(task, recentEnough: true)
            }
            switch next {
            case .held(let keys):
                return keys
            case .wait(let task, recentEnough: true):
                return try await task.value
            case .wait(let task, recentEnough: false):
                _ = try? await task.value   // then the next read, which begins after `instant`
            }
        }
    }

    /// Reads the live keys and keeps them, unless a read that began later was kept already.
    private func read(startedAt: ContinuousClock.Instant) async throws -> [LiveAPIKey] {
        let result: Result<[LiveAPIKey], any Error>
        do {
            result = .success(try await pool.withConnection { try $0.liveAPIKeys() })
        } catch {
            result = .failure(error)
        }
        state.withLock { state in
            if case .success(let keys) = result, state.readAt.map({ $0 < startedAt }) ?? true {
                state.keys = keys
                state.readAt = startedAt
            }
            state.reading = nil
        }
        return try result.get()
    }
}
