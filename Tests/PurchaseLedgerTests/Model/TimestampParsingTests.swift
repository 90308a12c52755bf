import Postgres
import PurchaseLedger
import Testing

@Suite("Timestamp: parsing")
struct TimestampParsingTests {
    /// Expected microseconds computed with Python's `datetime`.
    @Test(
        "valid ISO-8601 texts parse to the instant Python computes",
        arguments: [
            ("2026-01-01T00:00:00Z", Int64(1_767_225_600_000_000)),
            ("2026-01-01t00:00:00z", 1_767_225_600_000_000),
            ("2024-02-29T23:59:59.999999+14:00", 1_709_200_799_999_999),
            ("2026-01-01T05:30:00+05:30", 1_767_225_600_000_000),
            ("2026-01-01T05:30:00+0530", 1_767_225_600_000_000),
            ("1969-12-31T19:00:00-05", 0),
            ("2026-06-15T12:00:00.123456789-0800", 1_781_553_600_123_456),
            ("0001-01-01T00:00:00Z", -62_135_596_800_000_000),
            ("9999-12-31T23:59:59.999999Z", 253_402_300_799_999_999),
            ("2000-02-29 12:34:56.7z", 951_827_696_700_000),
            ("1900-03-01T00:00:00.000001Z", -2_203_891_199_999_999),
            ("1969-12-31T23:59:59.9999999Z", -1),
            ("2026-01-01T00:00:00-00:00", 1_767_225_600_000_000),
            ("2026-01-01T23:59:59+23:59", 1_767_225_659_000_000),
        ]
    )
    func validISO8601(text: String, microseconds: Int64) {
        #expect(Timestamp.parseISO8601(text) == Timestamp(microseconds: microseconds))
    }

    @Test(
        "invalid ISO-8601 texts are refused",
        arguments: [
            "", "yesterday", "2026-01-01T00:00:00", "2026-01-01", "2026-01-01T00:00Z",
            "2026-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2026-04-31T00:00:00Z",
            "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "2026-01-00T00:00:00Z", "0000-01-01T00:00:00Z",
            "2026-01-01T24:00:00Z", "2026-01-01T23:60:00Z", "2026-12-31T23:59:60Z",
            "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00.1234567890Z", "2026-01-01T00:00:00,5Z",
            "2026-1-01T00:00:00Z", "26-01-01T00:00:00Z", "+2026-01-01T00:00:00Z", "20260101T000000Z",
            "2026-01-01T00:00:00+5", "2026-01-01T00:00:00+05:", "2026-01-01T00:00:00+05:3",
            "2026-01-01T00:00:00+0530x", "2026-01-01T00:00:00+24:00", "2026-01-01T00:00:00+05:60",
            "2026-01-01T00:00:00+05:30:00", "2026-01-01T00:00:00UTC", "2026-01-01T00:00:00 Z",
            " 2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z ", "2026-01-01_00:00:00Z", "2026-01-01T00:00:00ZZ",
            "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "２０２６-01-01T00:00:00Z",
        ]
    )
    func invalidISO8601(text: String) {
        #expect(Timestamp.parseISO8601(text) == nil)
    }

    @Test("February 29 is accepted in leap years and refused in the year after", arguments: [4, 1600, 2000, 2004, 2024, 2400, 9996])
    func leapDays(year: Int) {
        func padded(_ year: Int) -> String {
            String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        }
        #expect(Timestamp.parseISO8601("\(padded(year))-02-29T00:00:00Z") != nil)
        #expect(Timestamp.parseISO8601("\(padded(year + 1))-02-29T00:00:00Z") == nil)
        #expect(Timestamp.parseISO8601("\(padded(year + 1))-02-28T00:00:00Z") != nil)
    }

    @Test(
        "PostgreSQL timestamptz output parses, with any offset it prints",
        arguments: [
            ("2026-01-01 00:00:00+00", "2026-01-01T00:00:00Z"),
            ("2026-01-01 00:00:00.123456+00", "2026-01-01T00:00:00.123456Z"),
            ("2026-01-01 00:00:00.5+00", "2026-01-01T00:00:00.500Z"),
            ("2026-01-01 05:30:00+05:30", "2026-01-01T00:00:00Z"),
            ("2025-12-31 16:00:00-08", "2026-01-01T00:00:00Z"),
            ("1883-11-18 12:00:00-04:56:02", "1883-11-18T16:56:02Z"),
            ("0001-01-01 00:00:00+00", "0001-01-01T00:00:00Z"),
        ]
    )
    func postgresText(text: String, iso: String) throws {
        let expected = try #require(Timestamp.parseISO8601(iso))
        #expect(PostgresTimestamp.microseconds(parsing: text) == expected.microseconds)
    }
}
