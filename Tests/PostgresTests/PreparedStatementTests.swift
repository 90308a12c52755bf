import Postgres
import Testing

@Suite("Prepared statements")
struct PreparedStatementTests {
    private func preparedCount(_ connection: Connection) throws -> Int {
        try connection.query("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 'ledger_s%'")[0]
            .decode("n", as: Int.self)
    }

    @Test func aRepeatedStatementIsPreparedOnceAndRunByName() async throws {
        try await withTestConnection { connection throws in
            for n in 0..<20 {
                #expect(try connection.query("SELECT \(n)::int * 2 AS twice")[0].decode("twice", as: Int.self) == n * 2)
            }
            // The statement above and the count query itself.
            #expect(try preparedCount(connection) == 2)
        }
    }

    @Test func oneTextWithOtherParameterTypesIsPreparedApart() async throws {
        try await withTestConnection { connection throws in
            // A text parameter leaves its type to the server (text here); a binary one is sent
            // as bytea, whose text form is hex. Prepared once for both, the bytes would be read
            // as text.
            let text: String = "ab"
            let bytes: [UInt8] = [0x61, 0x62]
            #expect(try connection.query("SELECT \(text)::text AS t")[0].decode("t", as: String.self) == "ab")
            #expect(try connection.query("SELECT \(bytes)::text AS t")[0].decode("t", as: String.self) == "\\x6162")
            #expect(try connection.query("SELECT \(text)::text AS t")[0].decode("t", as: String.self) == "ab")
            // The two preparations and the count query.
            #expect(try preparedCount(connection) == 3)
        }
    }

    @Test func aForgottenStatementIsPreparedAgain() async throws {
        try await withTestConnection { connection throws in
            #expect(try connection.query("SELECT \(1)::int AS n")[0].decode("n", as: Int.self) == 1)
            try connection.executeScript(unsafeSQL: "DEALLOCATE ALL")
            #expect(try connection.query("SELECT \(2)::int AS n")[0].decode("n", as: Int.self) == 2)
        }
    }

    @Test func aStatementWhoseResultTypeChangedIsPreparedAgain() async throws {
        try await withTestConnection { connection throws in
            try connection.executeScript(unsafeSQL: "CREATE TABLE t (a int); INSERT INTO t VALUES (1)")
            #expect(try connection.query("SELECT * FROM t WHERE a = \(1)").columns == ["a"])
            try connection.executeScript(unsafeSQL: "ALTER TABLE t ADD COLUMN b text")
            #expect(try connection.query("SELECT * FROM t WHERE a = \(1)").columns == ["a", "b"])
        }
    }

    @Test func pipelinedStatementsAreRunPreparedToo() async throws {
        try await withTestConnection { connection throws in
            let statements: [SQL] = (0..<50).map { "SELECT \($0)::int + 1 AS n" }
            let results = try connection.pipeline(statements)
            #expect(try results.enumerated().allSatisfy { i, r in try r.get()[0].decode("n", as: Int.self) == i + 1 })
            let again = try connection.pipeline(statements)
            #expect(again.count == 50)
            #expect(try preparedCount(connection) == 2)
        }
    }
}
