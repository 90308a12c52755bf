import Postgres
import Testing

private struct Refusal: Error, Equatable {
    let code: String
}

@Suite("Transactions and savepoints")
struct TransactionTests {
    @Test func thrownErrorRollsBackEverythingAndIsRethrownUnchanged() async throws {
        try await withTestConnection { connection in
            try connection.executeScript(unsafeSQL: "CREATE TABLE t (n int)")
            let error = try #require(throws: Refusal.self) {
                try connection.transaction { tx in
                    try tx.execute("INSERT INTO t (n) VALUES (\(1)), (\(2))")
                    throw Refusal(code: "TOKEN_INVALID")
                }
            }
            #expect(error == Refusal(code: "TOKEN_INVALID"))
            #expect(try connection.query("SELECT count(*) AS n FROM t")[0].decode("n", as: Int.self) == 0)
            #expect(!connection.isBroken)
        }
    }

    @Test func returnedValueIsCommitted() async throws {
        try await withTestConnection { connection in
            try connection.executeScript(unsafeSQL: "CREATE TABLE t (n int)")
            let inserted = try connection.transaction { tx in try tx.execute("INSERT INTO t (n) VALUES (\(5))") }
            #expect(inserted == 1)
            #expect(try connection.query("SELECT n FROM t")[0].decode("n", as: Int.self) == 5)
        }
    }

    @Test func savepointRollbackKeepsOuterWork() async throws {
        try await withTestConnection { connection in
            try connection.executeScript(unsafeSQL: "CREATE TABLE t (n int UNIQUE)")
            try connection.transaction { tx in
                try tx.execute("INSERT INTO t (n) VALUES (\(1))")
                #expect(throws: Refusal(code: "inner")) {
                    try tx.savepoint { inner in
                        try inner.execute("INSERT INTO t (n) VALUES (\(2))")
                        throw Refusal(code: "inner")
                    }
                }
                let duplicate = try #require(throws: PostgresError.self) {
                    try tx.savepoint { inner in try inner.execute("INSERT INTO t (n) VALUES (\(1))") }
                }
                #expect(duplicate.sqlState == .uniqueViolation)
                try tx.savepoint { outer in
                    try outer.execute("INSERT INTO t (n) VALUES (\(3))")
                    try? outer.savepoint { inner in
                        try inner.execute("INSERT INTO t (n) VALUES (\(4))")
                        throw Refusal(code: "nested")
                    }
                }
            }
            let values = try connection.query("SELECT n FROM t ORDER BY n").map { try $0.decode("n", as: Int.self) }
            #expect(values == [1, 3])
        }
    }

    @Test func failedRollbackMarksTheConnectionBrokenAndStillRethrowsTheBodyError() async throws {
        try await withTestConnection { connection in
            let error = try #require(throws: Refusal.self) {
                try connection.transaction { tx in
                    try terminateBackend(tx.serverProcessID)
                    throw Refusal(code: "after the kill")
                }
            }
            #expect(error == Refusal(code: "after the kill"))
            #expect(connection.isBroken)
            let refused = try #require(throws: PostgresError.self) { try connection.query("SELECT 1") }
            #expect(refused.kind == .connectionBroken)
        }
    }

    @Test func nestedTransactionIsRefused() async throws {
        try await withTestConnection { connection in
            let error = try #require(throws: PostgresError.self) {
                try connection.transaction { tx in try tx.transaction { _ in 1 } }
            }
            #expect(error.kind == .client)
        }
    }

    @Test func commitOfAFailedTransactionThrowsInsteadOfPretendingSuccess() async throws {
        try await withTestConnection { connection in
            try connection.executeScript(unsafeSQL: "CREATE TABLE t (n int UNIQUE)")
            let error = try #require(throws: PostgresError.self) {
                try connection.transaction { tx in
                    try tx.execute("INSERT INTO t (n) VALUES (\(1))")
                    _ = try? tx.execute("INSERT INTO t (n) VALUES (\(1))")
                }
            }
            #expect(error.kind == .client)
            #expect(try connection.query("SELECT count(*) AS n FROM t")[0].decode("n", as: Int.self) == 0)
        }
    }
}
