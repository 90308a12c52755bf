import Foundation
import Postgres

/// An API key as `ledger keys list` shows it: never the key, nor its digest.
public struct APIKeyRecord: Sendable, Hashable {
    /// The key's id, for `ledger keys revoke`.
    public var id: Int64
    /// What the key may do.
    public var role: APIKeyRole
    /// When it was made.
    public var createdAt: Date
    /// When it was revoked; nil while it is live.
    public var revokedAt: Date?
}

/// A key in force, as the server compares it.
struct LiveAPIKey: Sendable {
    var id: Int64
    var role: APIKeyRole
    var digest: [UInt8]
}

extension Connection {
    /// Makes a key with `role`, stores its SHA-256 and returns its id and the key itself (shown
    /// once: the ledger cannot tell it again).
    public func addAPIKey(role: APIKeyRole) throws -> (id: Int64, key: String) {
        let key = APIKey.generate()
        let rows = try query("""
            INSERT INTO ledger.api_keys (role, key_sha256) VALUES (\(role.rawValue), \(APIKey.digest(key)))
            RETURNING id
            """)
        return (try rows[0].decode("id"), key)
    }

    /// Every key, revoked ones included, by id.
    public func apiKeys() throws -> [APIKeyRecord] {
        try query("SELECT id, role, created_at, revoked_at FROM ledger.api_keys ORDER BY id").map { row in
            let role: String = try row.decode("role")
            return APIKeyRecord(id: try row.decode("id"), role: APIKeyRole(rawValue: role) ?? .reader,
                                createdAt: try row.decode("created_at"), revokedAt: try row.decode("revoked_at"))
        }
    }

    /// Revokes a key; false when there is no such key or it was already revoked.
    public func revokeAPIKey(id: Int64) throws -> Bool {
        try execute("UPDATE ledger.api_keys SET revoked_at = now() WHERE id = \(id) AND revoked_at IS NULL") == 1
    }

    /// The keys in force, through the function the server's role may call.
    func liveAPIKeys() throws -> [LiveAPIKey] {
        try query("SELECT id, role, key_sha256 FROM ledger.live_api_keys()").compactMap { row in
            let role: String = try row.decode("role")
            guard let known = APIKeyRole(rawValue: role) else { return nil }
            return LiveAPIKey(id: try row.decode("id"), role: known, digest: try row.decode("key_sha256"))
        }
    }
}
