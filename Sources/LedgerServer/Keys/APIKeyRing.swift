import Foundation
import Postgres
import Synchronization

/// The keys in force, read from the database again once older than `refreshInterval`, so a
/// revoked key stops working within that time; an unknown key makes it read them again if they
/// are older than a second, so a new key works at once. A presented key is hashed and its digest compared with every
/// live digest in constant time, without stopping at a match.
final class APIKeyRing: Sendable {
    private let pool: ConnectionPool
    private let refreshInterval: Duration
    private let cache = Mutex<(keys: [LiveAPIKey], loadedAt: ContinuousClock.Instant?)>(([], nil))

    init(pool: ConnectionPool, refreshInterval: Duration) {
        self.pool = pool
        self.refreshInterval = refreshInterval
    }

    /// The id and role of the key, or nil when it is not a live key. Throws when the keys cannot
    /// be read (the database is unreachable).
    func identify(_ key: String) async throws -> (id: Int64, role: APIKeyRole)? {
        let digest = APIKey.digest(key)
        if let match = Self.match(digest, in: try await keys(maxAge: refreshInterval)) { return match }
        // A key made since the last read: read again, at most once a second, so unknown keys
        // cannot make every request a database round trip.
        return Self.match(digest, in: try await keys(maxAge: min(refreshInterval, .seconds(1))))
    }

    /// Compares with every live digest, without stopping at a match.
    private static func match(_ digest: [UInt8], in keys: [LiveAPIKey]) -> (id: Int64, role: APIKeyRole)? {
        var match: (id: Int64, role: APIKeyRole)?
        for live in keys where APIKey.constantTimeEqual(live.digest, digest) {
            match = (live.id, live.role)
        }
        return match
    }

    private func keys(maxAge: Duration) async throws -> [LiveAPIKey] {
        let now = ContinuousClock.now
        let cached = cache.withLock { cache -> [LiveAPIKey]? in
            guard let loadedAt = cache.loadedAt, now - loadedAt < maxAge else { return nil }
            return cache.keys
        }
        if let cached { return cached }
        let fresh = try await pool.withConnection { try $0.liveAPIKeys() }
        cache.withLock { $0 = (fresh, now) }
        return fresh
    }
}
