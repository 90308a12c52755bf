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
