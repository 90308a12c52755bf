import Foundation
import Postgres
import Testing

@Suite("Parameters round-trip byte for byte")
struct ParameterRoundTripTests {
    /// A named text, so a 1 MiB argument does not flood the test log.
    struct Sample: Sendable, CustomTestStringConvertible {
        let name: String
        let text: String
        var testDescription: String { name }
    }

    static let awkwardTexts = [
        Sample(name: "quotes", text: "it's \"quoted\""),
        Sample(name: "backslashes", text: #"back\slash \\ and \x00 \N"#),
        Sample(name: "control characters", text: "tab\tnewline\ncarriage\rcontrol\u{1}"),
        Sample(name: "emoji", text: "emoji 🧾💸👩‍👩‍👧 and accents é ñ"),
        Sample(name: "injection", text: "'; DROP TABLE x; --"),
        Sample(name: "empty", text: ""),
        Sample(name: "1 MiB", text: String(repeating: "0123456789abcdef", count: 65_536)),
    ]

    @Test(arguments: awkwardTexts)
    func textComesBackUnchangedThroughSelectAndThroughATable(sample: Sample) async throws {
        let text = sample.text
        try await withTestConnection { connection in
            let selected = try connection.query("SELECT \(text)::text AS value")
            #expect(try selected[0].decode("value", as: String.self) == text)

            try connection.executeScript(unsafeSQL: "CREATE TABLE x (id int PRIMARY KEY, value text NOT NULL)")
            try connection.execute("INSERT INTO x (id, value) VALUES (1, \(text))")
            let stored = try connection.query("SELECT value, octet_length(value) AS bytes FROM x WHERE id = 1")
            #expect(try stored[0].decode("value", as: String.self) == text)
            #expect(try stored[0].decode("bytes", as: Int.self) == text.utf8.count)
            #expect(try connection.query("SELECT count(*) AS n FROM x")[0].decode("n", as: Int.self) == 1)
        }
    }

    @Test func textContainingNulIsRefusedAndNothingIsWritten() async throws {
        try await withTestConnection { connection in
            try connection.executeScript(unsafeSQL: "CREATE TABLE x (value text)")
            let error = try #require(throws: PostgresError.self) {
                try connection.execute("INSERT INTO x (value) VALUES (\("before\u{0}after"))")
            }
            #expect(error.kind == .encoding)
            #expect(error.description.contains("U+0000"))
            #expect(!error.description.contains("before"))
            #expect(try connection.query("SELECT count(*) AS n FROM x")[0].decode("n", as: Int.self) == 0)
            // A hand-made .text value is checked too, and the connection remains usable.
            #expect(throws: PostgresError.self) { try connection.query("SELECT \(PostgresValue.text("a\u{0}"))::text") }
            #expect(try connection.query("SELECT 1 AS one")[0].decode("one", as: Int.self) == 1)
        }
    }

    @Test(arguments: ["12345678901234567890.123456789", "1.10", "0.000", "-42.50", "7"])
    func numericKeepsEveryDigitAndItsScale(text: String) async throws {
        try await withTestConnection { connection in
            try connection.executeScript(unsafeSQL: "CREATE TABLE amounts (amount numeric NOT NULL)")
            let numeric = try #require(PostgresNumeric(text))
            try connection.execute("INSERT INTO amounts (amount) VALUES (\(numeric))")
            let row = try connection.query("SELECT amount, amount::text AS printed FROM amounts")[0]
            #expect(try row.decode("amount", as: PostgresNumeric.self).text == text)
            #expect(try row.decode("printed", as: String.self) == text)
        }
    }

    @Test func decimalRoundTripsThroughNumeric() async throws {
        try await withTestConnection { connection in
            let literal: PostgresNumeric = "19.99"
            let price = try #require(literal.decimal)
            let row = try connection.query("SELECT \(price)::numeric AS price")[0]
            #expect(try row.decode("price", as: Decimal.self) == price)
            #expect(try row.decode("price", as: PostgresNumeric.self) == "19.99")
        }
    }

    @Test func numericRejectsTextThatIsNotAPlainDecimal() {
        for text in ["", "-", "1.", ".5", "1e5", "NaN", "Infinity", " 1", "1,5", "--1"] {
            #expect(PostgresNumeric(text) == nil, "\(text)")
        }
        #expect(PostgresNumeric("123456789012345678901234567890123456789012345").decimal == nil)
        #expect(PostgresNumeric(Decimal(string: "1.25")!).text == "1.25")
    }
}
