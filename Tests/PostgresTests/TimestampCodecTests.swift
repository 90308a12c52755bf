import Foundation
import Postgres
import Testing

@Suite("Timestamp text without DateFormatter")
struct TimestampCodecTests {
    @Test(arguments: [
        (0.0, "1970-01-01 00:00:00.000000+00"),
        (951_782_400.0, "2000-02-29 00:00:00.000000+00"),
        (-1.0, "1969-12-31 23:59:59.000000+00"),
        (-0.0000004, "1970-01-01 00:00:00.000000+00"),
        (1_715_393_723.4567891, "2024-05-11 02:15:23.456789+00"),
        (-62_135_596_800.0, "0001-01-01 00:00:00.000000+00"),
        (-62_135_596_801.0, "0001-12-31 23:59:59.000000+00 BC"),
        (253_402_300_799.5, "9999-12-31 23:59:59.500000+00"),
    ])
    func dateIsBoundAsUTCWithMicroseconds(seconds: Double, expected: String) throws {
        #expect(try Date(timeIntervalSince1970: seconds).postgresValue() == .text(expected))
    }

    @Test("text that is no timestamp PostgreSQL prints is refused",
          arguments: ["infinity", "-infinity", "2026-01-01 00:00:00Z", "2026-01-01 00:00:00+0530", "", "2026-1-01"])
    func notATimestamp(text: String) {
        #expect(PostgresTimestamp.microseconds(parsing: text) == nil)
    }

    @Test func nonFiniteDateIsAnEncodingError() {
        #expect(throws: PostgresError.self) { try Date(timeIntervalSinceReferenceDate: .nan).postgresValue() }
    }
}
