import Foundation
import Postgres
import Testing

@Suite("Arrays and composites bind as one parameter")
struct ArrayCompositeTests {
    /// Texts that the array and row syntaxes treat specially, and a few that they do not.
    static let awkward = [
        "plain", "", "NULL", "with,comma", "{braces}", "(parens)", "it's \"quoted\"", #"back\slash \\"#,
        "  spaces  ", "tab\tnewline\n", "emoji 🧾 é", #"\x00"#,
    ]

    @Test func textArrayComesBackElementByElementWithItsNulls() async throws {
        let values: [String?] = Self.awkward + [nil]
        try await withTestConnection { connection in
            let rows = try connection.query("""
                SELECT value, n FROM unnest(\(try PostgresArray(values))::text[]) WITH ORDINALITY AS x(value, n) ORDER BY n
                """)
            #expect(rows.count == values.count)
            for (row, expected) in zip(rows, values) {
                #expect(try row.decode("value", as: String?.self) == expected)
            }
            #expect(try connection.query("SELECT cardinality(\(PostgresArray(elements: []))::text[]) AS n")[0].decode("n", as: Int.self) == 0)
        }
    }

    @Test func compositeFieldsComeBackTypedAndNullsStayNull() async throws {
        try await withTestConnection { connection in
            try connection.executeScript(unsafeSQL: "CREATE TYPE sample AS (label text, amount numeric, at timestamptz, digest bytea, flag boolean, note text)")
            let at = Date(timeIntervalSince1970: 1_700_000_000.5)
            for label in Self.awkward {
                let row = try PostgresComposite([label, PostgresNumeric("12.50"), at, [0, 1, 0xfe, 0xff] as [UInt8], true, nil])
                let rows = try connection.query("""
                    SELECT (r).label, (r).amount::text AS amount, (r).at, encode((r).digest, 'hex') AS digest, (r).flag,
                           (r).note IS NULL AS null_note
                      FROM (SELECT \(row)::sample AS r) x
                    """)
                #expect(try rows[0].decode("label", as: String.self) == label)
                #expect(try rows[0].decode("amount", as: String.self) == "12.50")
                #expect(try rows[0].decode("at", as: Date.self) == at)
                #expect(try rows[0].decode("digest", as: String.self) == "0001feff")
                #expect(try rows[0].decode("flag", as: Bool.self))
                #expect(try rows[0].decode("null_note", as: Bool.self))
            }
        }
    }

    @Test func anArrayOfCompositesKeepsEachRowApart() async throws {
        try await withTestConnection { connection in
            try connection.executeScript(unsafeSQL: "CREATE TYPE pair AS (name text, detail text)")
            let pairs = try Self.awkward.map { try PostgresComposite([$0, $0 + "\"),(" ]) }
            let rows = try connection.query("""
                SELECT name, detail, n FROM unnest(\(PostgresArray(elements: pairs.map { $0.postgresValue() }))::pair[])
                       WITH ORDINALITY AS x(name, detail, n) ORDER BY n
                """)
            #expect(rows.count == Self.awkward.count)
            for (row, label) in zip(rows, Self.awkward) {
                #expect(try row.decode("name", as: String.self) == label)
                #expect(try row.decode("detail", as: String.self) == label + "\"),(")
            }
        }
    }

    @Test func aFieldWithNulIsRefusedBeforeAnythingIsSent() throws {
        #expect(throws: PostgresError.self) { try PostgresComposite(["a\u{0}b"]) }
        #expect(throws: PostgresError.self) { try PostgresArray(["a\u{0}b"]) }
    }
}
