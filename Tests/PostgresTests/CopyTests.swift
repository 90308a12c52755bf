import Postgres
import Testing

@Suite("COPY FROM STDIN")
struct CopyTests {
    @Test func hundredThousandAwkwardRowsRoundTripExactly() async throws {
        try await withTestConnection { connection in
            try connection.executeScript(unsafeSQL: "CREATE TABLE lines (id int PRIMARY KEY, label text, note text)")
            let awkward = ["tab\there", "new\nline", "back\\slash \\N", "cr\rlf\r\n", "", "\\", "plain 🧾"]
            func row(_ id: Int) -> [String?] {
                [String(id), awkward[id % awkward.count] + String(id), id % 3 == 0 ? nil : awkward[(id + 1) % awkward.count]]
            }
            let copied = try connection.copyFrom(
                unsafeSQL: "COPY lines (id, label, note) FROM STDIN", rows: (0..<100_000).lazy.map(row))
            #expect(copied == 100_000)
            let rows = try connection.query("SELECT id, label, note FROM lines ORDER BY id")
            #expect(rows.count == 100_000)
            var mismatches = 0
            for (id, stored) in rows.enumerated() {
                let expected = row(id)
                let actual: [String?] = [
                    String(try stored.decode("id", as: Int.self)), try stored.decode("label", as: String?.self),
                    try stored.decode("note", as: String?.self),
                ]
                if actual != expected { mismatches += 1 }
            }
            #expect(mismatches == 0)
        }
    }

    @Test func valueWithNulAbortsTheCopyAndWritesNothing() async throws {
        try await withTestConnection { connection in
            try connection.executeScript(unsafeSQL: "CREATE TABLE t (s text)")
            let error = try #require(throws: PostgresError.self) {
                try connection.copyFrom(unsafeSQL: "COPY t (s) FROM STDIN", rows: [["fine"], ["bad\u{0}"]])
            }
            #expect(error.kind == .encoding)
            #expect(!connection.isBroken)
            #expect(try connection.query("SELECT count(*) AS n FROM t")[0].decode("n", as: Int.self) == 0)
        }
    }

    @Test func badDataSurfacesTheServerError() async throws {
        try await withTestConnection { connection in
            try connection.executeScript(unsafeSQL: "CREATE TABLE t (n int)")
            let error = try #require(throws: PostgresError.self) {
                try connection.copyFrom(unsafeSQL: "COPY t (n) FROM STDIN", rows: [["1"], ["not a number"]])
            }
            #expect(error.kind == .server)
            #expect(error.sqlState == SQLState("22P02"))
            #expect(try connection.query("SELECT count(*) AS n FROM t")[0].decode("n", as: Int.self) == 0)
            let missing = try #require(throws: PostgresError.self) {
                try connection.copyFrom(unsafeSQL: "COPY nope (n) FROM STDIN", rows: [["1"]])
            }
            #expect(missing.sqlState == .undefinedTable)
        }
    }
}
