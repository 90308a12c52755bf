import Postgres
import Testing

@Suite("Server and connection errors")
struct ErrorTests {
    @Test func uniqueViolationCarriesSQLStateAndConstraintName() async throws {
        try await withTestConnection { connection in
            try connection.executeScript(unsafeSQL: "CREATE TABLE users (email text CONSTRAINT users_email_key UNIQUE)")
            try connection.execute("INSERT INTO users (email) VALUES (\("a@example.com"))")
            let error = try #require(throws: PostgresError.self) {
                try connection.execute("INSERT INTO users (email) VALUES (\("a@example.com"))")
            }
            #expect(error.kind == .server)
            #expect(error.sqlState == .uniqueViolation)
            #expect(error.constraint == "users_email_key")
            #expect(error.table == "users")
            #expect(error.detail?.contains("a@example.com") == true)
            #expect(!error.description.contains("a@example.com"))
            #expect(error.description.hasPrefix("SQLSTATE 23505: "))
            #expect(!connection.isBroken)
            #expect(try connection.query("SELECT count(*) AS n FROM users")[0].decode("n", as: Int.self) == 1)
        }
    }

    @Test func undefinedTableIsAServerErrorAndTheConnectionStaysUsable() async throws {
        try await withTestConnection { connection in
            let error = try #require(throws: PostgresError.self) { try connection.query("SELECT * FROM missing") }
            #expect(error.sqlState == .undefinedTable)
            #expect(try connection.query("SELECT 2 AS two")[0].decode("two", as: Int.self) == 2)
        }
    }

    @Test(arguments: [
        "postgresql://ledger:s3cretPW@127.0.0.1:1/nodb",
        "host=127.0.0.1 port=1 user=ledger password=s3cretPW dbname=nodb",
        "postgresql://ledger:s3cretPW@127.0.0.1:1/nodb?bogus_option=1",
        "host=127.0.0.1 port=1 password='s3cretPW' nonsense",
    ])
    func connectionFailureIsOneLineWithoutThePassword(conninfo: String) throws {
        let error = try #require(throws: PostgresError.self) { try Connection.connect(ConnectionConfiguration(conninfo)) }
        #expect(error.kind == .connection)
        #expect(!error.description.contains("s3cretPW"))
        #expect(!error.message.contains("s3cretPW"))
        #expect(!error.description.contains("\n"))
        #expect(!error.description.isEmpty)
    }

    @Test func wrongPasswordOrUserOnTheRealServerFailsWithoutEchoingIt() throws {
        let server = try TestDatabase.serverConninfo()
        let configuration = ConnectionConfiguration(
            server + " user=no_such_role_s3cretPW password=s3cretPW", database: "postgres")
        let error = try #require(throws: PostgresError.self) { try Connection.connect(configuration) }
        #expect(error.kind == .connection)
        #expect(!error.description.contains("s3cretPW"))
        #expect(!error.description.contains("\n"))
    }
}
