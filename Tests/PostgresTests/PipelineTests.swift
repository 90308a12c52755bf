import Postgres
import Testing

@Suite("Pipeline mode")
struct PipelineTests {
    @Test func thousandStatementsReturnThousandResultsInOrder() async throws {
        try await withTestConnection { connection in
            let statements: [SQL] = (0..<1000).map { "SELECT \($0)::int + 1 AS next" }
            let results = try connection.pipeline(statements)
            #expect(results.count == 1000)
            for (input, result) in results.enumerated() {
                #expect(try result.get()[0].decode("next", as: Int.self) == input + 1)
            }
            #expect(try connection.query("SELECT 1 AS one")[0].decode("one", as: Int.self) == 1)
        }
    }

    @Test func failureInTheMiddleReportsItsErrorAndSkipsTheRest() async throws {
        try await withTestConnection { connection in
            try connection.executeScript(unsafeSQL: "CREATE TABLE t (n int UNIQUE)")
            let results = try connection.pipeline([
                "INSERT INTO t (n) VALUES (\(1))",
                "INSERT INTO t (n) VALUES (\(2))",
                "INSERT INTO t (n) VALUES (\(1))",
                "INSERT INTO t (n) VALUES (\(3))",
                "SELECT \(4)::int AS four",
            ])
            #expect(results.count == 5)
            #expect(try results[0].get().affectedRows == 1)
            #expect(try results[1].get().affectedRows == 1)
            let failure = try #require(throws: PostgresError.self) { try results[2].get() }
            #expect(failure.sqlState == .uniqueViolation)
            for skipped in results[3...] {
                let error = try #require(throws: PostgresError.self) { try skipped.get() }
                #expect(error.kind == .server)
                #expect(error.sqlState == nil)
                #expect(error.message == "skipped: an earlier statement in the pipeline failed")
            }
            // The pipeline ran as one implicit transaction: the failure undid the earlier inserts.
            #expect(try connection.query("SELECT count(*) AS n FROM t")[0].decode("n", as: Int.self) == 0)
            #expect(!connection.isBroken)
        }
    }

    @Test func bigParametersDoNotDeadlock() async throws {
        try await withTestConnection { connection in
            try connection.executeScript(unsafeSQL: "CREATE TABLE blobs (id int, body text)")
            let body = String(repeating: "x", count: 100_000)
            let statements: [SQL] = (0..<200).map {
                "WITH inserted AS (INSERT INTO blobs (id, body) VALUES (\($0), \(body)) RETURNING body) SELECT body FROM inserted"
            }
            let results = try connection.pipeline(statements)
            #expect(results.count == 200)
            #expect(try results.allSatisfy { try $0.get()[0].decode("body", as: String.self) == body })
            #expect(try connection.query("SELECT count(*) AS n FROM blobs")[0].decode("n", as: Int.self) == 200)
        }
    }

    @Test func tenThousandStatementsComplete() async throws {
        try await withTestConnection { connection in
            let payload = String(repeating: "y", count: 2_000)
            let results = try connection.pipeline((0..<10_000).map { "SELECT \($0)::int AS n, \(payload)::text AS p" })
            #expect(results.count == 10_000)
            #expect(try results[9_999].get()[0].decode("n", as: Int.self) == 9_999)
        }
    }

    @Test func encodingErrorSendsNothing() async throws {
        try await withTestConnection { connection in
            try connection.executeScript(unsafeSQL: "CREATE TABLE t (s text)")
            let error = try #require(throws: PostgresError.self) {
                try connection.pipeline(["INSERT INTO t (s) VALUES (\("ok"))", "INSERT INTO t (s) VALUES (\("bad\u{0}"))"])
            }
            #expect(error.kind == .encoding)
            #expect(try connection.query("SELECT count(*) AS n FROM t")[0].decode("n", as: Int.self) == 0)
            #expect(try connection.pipeline([]).isEmpty)
        }
    }
}
