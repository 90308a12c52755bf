import Postgres
import Testing

@Suite("SQL interpolation binds values")
struct SQLInterpolationTests {
    @Test func interpolatedValueBecomesAPlaceholderAndOneBinding() {
        let x = "secret value"
        let sql: SQL = "SELECT \(x)"
        #expect(sql.text == "SELECT $1")
        #expect(sql.bindings == [.text("secret value")])
        #expect(!sql.description.contains("secret"))
        #expect(!String(describing: sql).contains("secret"))
    }

    @Test func placeholdersAreNumberedInOrderAndNilBindsNull() {
        let missing: Int? = nil
        let sql: SQL = "INSERT INTO t (a, b, c) VALUES (\(1), \(missing), \(true))"
        #expect(sql.text == "INSERT INTO t (a, b, c) VALUES ($1, $2, $3)")
        #expect(sql.bindings == [.text("1"), .null, .text("t")])
    }

    @Test func unsafeSQLAndIdentifiersAreAppendedAsText() {
        let sql: SQL = "SELECT * FROM \(identifier: "odd \"name\"") \(unsafeSQL: "LIMIT 1")"
        #expect(sql.text == #"SELECT * FROM "odd ""name""" LIMIT 1"#)
        #expect(sql.bindings.isEmpty)
        #expect(SQL(unsafeSQL: "SELECT 1").text == "SELECT 1")
    }

    @Test func fragmentsAreEmbeddedWithTheirPlaceholdersRenumbered() {
        let names: [SQL] = ["\(identifier: "a")", "\(identifier: "b\"c")"]
        let condition: SQL = "x = \(1) AND y = \("two")"
        let sql: SQL = "SELECT \(0) FROM \(names.joined(separator: ", ")) WHERE \(condition) AND z = \(true)"
        #expect(sql.text == #"SELECT $1 FROM "a", "b""c" WHERE x = $2 AND y = $3 AND z = $4"#)
        #expect(sql.bindings == [.text("0"), .text("1"), .text("two"), .text("t")])
        let twice: SQL = "\(sql) UNION \(sql)"
        #expect(twice.text.hasSuffix("UNION SELECT $5 FROM \"a\", \"b\"\"c\" WHERE x = $6 AND y = $7 AND z = $8"))
        #expect(twice.bindings.count == 8)
        #expect(([] as [SQL]).joined(separator: ", ").text == "")
    }

    @Test func bytesBindInBinaryFormat() {
        let bytes: [UInt8] = [0, 1, 255]
        let sql: SQL = "SELECT \(bytes)"
        #expect(sql.bindings == [.binary([0, 1, 255])])
    }

    @Test func aValueThatCannotBeEncodedIsRememberedNotCrashed() {
        let sql: SQL = "SELECT \("a\u{0}b")"
        #expect(sql.text == "SELECT $1")
        #expect(sql.bindings == [.null])
    }
}

@Suite("Errors never leak values")
struct ErrorDescriptionTests {
    @Test func serverErrorDescriptionIsOneLineWithSQLStateAndConstraint() {
        let error = PostgresError(
            kind: .server, message: "duplicate key value violates unique constraint \"t_pkey\"",
            sqlState: .uniqueViolation, detail: "Key (id)=(42) already exists.", constraint: "t_pkey", table: "t")
        #expect(error.description == "SQLSTATE 23505: duplicate key value violates unique constraint \"t_pkey\" (constraint t_pkey, table t)")
        #expect(!error.description.contains("42"))
    }

    @Test func dataExceptionDescriptionHidesTheQuotedInput() {
        let error = PostgresError(
            kind: .server, message: "invalid input syntax for type integer: \"hunter2\"", sqlState: SQLState("22P02"))
        #expect(!error.description.contains("hunter2"))
        #expect(error.description.hasPrefix("SQLSTATE 22P02: invalid input syntax for type integer"))
    }

    @Test(arguments: [("08006", true), ("08001", true), ("57P01", true), ("57P02", true), ("57P03", true),
                      ("57014", false), ("23505", false), ("40001", false)])
    func connectionClassCoversClass08AndShutdowns(code: String, expected: Bool) {
        #expect(SQLState(code).isConnectionClass == expected)
    }
}
