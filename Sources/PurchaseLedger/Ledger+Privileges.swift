import Postgres

extension Ledger {
    /// Whether this ledger's database login may take store notifications: `ledger.notify` is
    /// granted only to `ledger_store` (Schema/migrations/0004_store_role.sql), the role of the
    /// process that verifies the stores' signatures; a login with `ledger_writer` alone gets
    /// `permission denied` for every notification. `ledger serve` asks at start and says so.
    public func mayTakeStoreNotifications() async throws -> Bool {
        try await pool.withConnection { connection in
            try connection.query("SELECT has_function_privilege('ledger.notify(jsonb)', 'EXECUTE') AS may")[0]
                .decode("may", as: Bool.self)
        }
    }
}

extension Ledger {
    /// What the operator of a Citus cluster should change for the ledger, one line each
    /// (`ledger.cluster_advice()`): empty on one server. `ledger migrate` prints them and
    /// `ledger serve` logs them as it starts.
    public func clusterAdvice() async throws -> [String] {
        try await pool.withConnection { try Self.clusterAdvice(on: $0) }
    }

    /// ``clusterAdvice()`` on a connection of the caller's.
    public static func clusterAdvice(on connection: Connection) throws -> [String] {
        try connection.query("SELECT ledger.cluster_advice() AS advice").map { try $0.decode("advice", as: String.self) }
    }
}
