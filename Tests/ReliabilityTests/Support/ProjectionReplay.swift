import Foundation
import Postgres

/// Checks that the live projections agree with the event log: replays the whole log into a
/// scratch schema with the ledger's own one definition (`ledger.install_projections`, then
/// `<scratch>.project_range` over every position) and compares every projection table with its
/// live twin, both ways (`EXCEPT ALL`). The scratch schema is dropped afterwards.
///
/// (`ledger verify` does this for operators; this is the tests' independent copy.)
enum ProjectionReplay {
    /// One projection table whose live rows differ from the replay's.
    struct Difference: CustomStringConvertible {
        var table: String
        /// Rows only in the live table.
        var onlyLive: Int
        /// Rows only in the replay.
        var onlyReplayed: Int
        var description: String { "\(table): \(onlyLive) row(s) only live, \(onlyReplayed) only replayed" }
    }

    /// The projection tables that differ from a replay of the log, and the tables compared.
    static func compare(_ connection: Connection) throws -> (differences: [Difference], tables: [String]) {
        let scratch = "replay_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        try connection.query("SELECT ledger.install_projections(\(scratch))")
        defer { _ = try? connection.query("DROP SCHEMA IF EXISTS \(identifier: scratch) CASCADE") }
        try connection.query("""
            SELECT \(identifier: scratch).project_range(0, (SELECT coalesce(max(position), 0) FROM ledger.events))
            """)
        let tables = try connection.query("""
            SELECT table_name::text AS name FROM information_schema.tables
             WHERE table_schema = \(scratch) AND table_type = 'BASE TABLE' ORDER BY 1
            """).map { try $0.decode("name", as: String.self) }
        var differences: [Difference] = []
        for table in tables {
            let row = try connection.query("""
                SELECT (SELECT count(*) FROM (SELECT * FROM ledger.\(identifier: table)
                                              EXCEPT ALL SELECT * FROM \(identifier: scratch).\(identifier: table)) x)::bigint AS live,
                       (SELECT count(*) FROM (SELECT * FROM \(identifier: scratch).\(identifier: table)
                                              EXCEPT ALL SELECT * FROM ledger.\(identifier: table)) y)::bigint AS replayed
                """)[0]
            let live = try row.decode("live", as: Int.self), replayed = try row.decode("replayed", as: Int.self)
            if live != 0 || replayed != 0 {
                differences.append(Difference(table: table, onlyLive: live, onlyReplayed: replayed))
            }
        }
        return (differences, tables)
    }
}
