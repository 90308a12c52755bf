import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// `ledger.distribution_plan()` says where each table lives on a Citus cluster. On one server it
/// is held to Citus's rule for distributed tables: every unique key includes the distribution
/// column. (scripts/citus.sh applies the whole plan on a cluster.)
@Suite("The distribution plan")
struct DistributionPlanTests {
    struct Placement: Equatable, CustomStringConvertible {
        let table: String
        let placement: String
        let column: String?
        var description: String { "\(table) \(placement) \(column ?? "-")" }
    }

    @Test func everyUniqueKeyOfADistributedTableIncludesItsColumn() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let plan = try c.query("SELECT table_name, placement, column_name FROM ledger.distribution_plan()").map {
                    Placement(table: try $0.decode("table_name"), placement: try $0.decode("placement"),
                              column: try $0.decode("column_name", as: String?.self))
                }
                #expect(Set(plan.map(\.placement)) == ["reference", "owner", "key", "coordinator"], "\(plan)")
                // Each unique key of each distributed table, and whether it holds the column.
                let keys = try c.query("""
                    SELECT p.table_name, k.conname, p.column_name,
                           (SELECT a.attnum FROM pg_attribute a
                             WHERE a.attrelid = p.table_name::regclass AND a.attname = p.column_name AND NOT a.attisdropped)
                             = ANY (k.conkey) AS holds
                      FROM ledger.distribution_plan() p
                      JOIN pg_constraint k ON k.conrelid = p.table_name::regclass AND k.contype IN ('p', 'u')
                     WHERE p.placement IN ('owner', 'key')
                    """)
                let lacking = try keys.filter { try $0.decode("holds", as: Bool?.self) != true }
                    .map { "\(try $0.decode("table_name", as: String.self)) \(try $0.decode("conname", as: String.self))" }
                #expect(lacking.isEmpty, "keys without their table's distribution column: \(lacking)")
                let distributed = Set(plan.filter { ["owner", "key"].contains($0.placement) }.map(\.table))
                #expect(Set(try keys.map { try $0.decode("table_name", as: String.self) }) == distributed,
                        "every distributed table has a key")
            }
        }
    }

    /// The library runs a call again when it lost a key's claim, a unique violation in a table
    /// distributed by its own key (`CommandRetry.isLostClaim`): its list of such tables is the
    /// plan's, but the keys' locks, whose rows are locked, never claimed.
    @Test func theRetrysRegistriesAreThePlansTablesDistributedByTheirKey() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let keyed = try c.query("""
                    SELECT split_part(table_name, '.', 2) AS t FROM ledger.distribution_plan() WHERE placement = 'key'
                    """).map { try $0.decode("t", as: String.self) }
                #expect(Set(keyed).subtracting(["key_locks"]) == CommandRetry.registries, "\(keyed)")
                #expect(keyed.contains("key_locks"))
            }
        }
    }

    /// Every SQL-language function that reads a table the plan distributes is made PL/pgSQL on a
    /// distributed log (`ledger.distributed_queries`, since Citus plans no statement that reads a
    /// distributed table through a SQL function), but the plan itself, which names the tables as
    /// text. On one server each listed query stays SQL, and the installer changes nothing.
    @Test func everySQLFunctionReadingADistributedTableIsMadePLpgSQLOnACluster() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                // Each SQL function that names a table the plan distributes: whether it is listed,
                // or the one known to stay SQL.
                let reading = try c.query("""
                    SELECT DISTINCT p.oid::regprocedure::text AS fn,
                           p.oid IN (SELECT q.fn FROM ledger.distributed_queries() q) AS listed,
                           p.oid = 'ledger.distribution_plan()'::regprocedure AS known
                      FROM pg_proc p
                      JOIN pg_language l ON l.oid = p.prolang
                      JOIN pg_namespace n ON n.oid = p.pronamespace
                      JOIN ledger.distribution_plan() d
                        ON d.placement IN ('owner', 'key') AND p.prosrc ~ (replace(d.table_name, '.', '\\.') || '\\M')
                     WHERE n.nspname IN ('ledger', 'analytics') AND l.lanname = 'sql'
                    """).map { (try $0.decode("fn", as: String.self), try $0.decode("listed", as: Bool.self), try $0.decode("known", as: Bool.self)) }
                let unlisted = reading.filter { !$0.1 && !$0.2 }.map(\.0)
                #expect(unlisted.isEmpty, "SQL functions reading a distributed table, not made PL/pgSQL on a cluster: \(unlisted)")
                #expect(reading.filter(\.2).count == 1, "the known SQL function is found: \(reading)")
                let listed = try c.query("""
                    SELECT q.fn::text AS fn, l.lanname FROM ledger.distributed_queries() q
                      JOIN pg_proc p ON p.oid = q.fn JOIN pg_language l ON l.oid = p.prolang
                    """).map { (try $0.decode("fn", as: String.self), try $0.decode("lanname", as: String.self)) }
                #expect(listed.count == 9)
                #expect(listed.allSatisfy { $0.1 == "sql" }, "\(listed)")
                // Each listed query names a distributed table, but analytics.subscribers, which
                // reads through analytics.access.
                #expect(reading.filter(\.1).count == 8, "\(reading)")
                #expect(try c.query("SELECT cardinality(ledger.install_distributed_queries()) AS made")[0].decode("made", as: Int.self) == 0)
            }
        }
    }

    /// A table that holds a user's rows (it has `user_id`) is in the plan, so that a new one is
    /// not left on the coordinator by mistake; so is every table the plan names.
    @Test func everyTableWithAnOwnerIsPlaced() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let unplaced = try c.query("""
                    SELECT format('%s.%s', c.table_schema, c.table_name) AS t
                      FROM information_schema.columns c
                     WHERE c.table_schema = 'ledger' AND c.column_name = 'user_id'
                    EXCEPT
                    SELECT table_name FROM ledger.distribution_plan()
                    """).map { try $0.decode("t", as: String.self) }
                #expect(unplaced.isEmpty, "tables with an owner the plan does not place: \(unplaced)")
                let missing = try c.query("""
                    SELECT table_name FROM ledger.distribution_plan() WHERE to_regclass(table_name) IS NULL
                    """).map { try $0.decode("table_name", as: String.self) }
                #expect(missing.isEmpty, "tables the plan names that do not exist: \(missing)")
            }
        }
    }
}
