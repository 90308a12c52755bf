import PurchaseLedger
import Postgres
import Foundation
import Testing

@Suite("Timestamp: formatting and conversions")
struct TimestampFormattingTests {
    /// Expected texts computed with Python's `datetime` (proleptic Gregorian).
    @Test(
        "ISO milliseconds truncate toward the past and PostgreSQL text keeps microseconds",
        arguments: [
            (Int64(-62_135_596_800_000_000), "0001-01-01T00:00:00.000Z", "0001-01-01 00:00:00.000000+00"),
            (253_402_300_799_999_999, "9999-12-31T23:59:59.999Z", "9999-12-31 23:59:59.999999+00"),
            (-1, "1969-12-31T23:59:59.999Z", "1969-12-31 23:59:59.999999+00"),
            (0, "1970-01-01T00:00:00.000Z", "1970-01-01 00:00:00.000000+00"),
            (1, "1970-01-01T00:00:00.000Z", "1970-01-01 00:00:00.000001+00"),
            (-1000, "1969-12-31T23:59:59.999Z", "1969-12-31 23:59:59.999000+00"),
            (-999, "1969-12-31T23:59:59.999Z", "1969-12-31 23:59:59.999001+00"),
            (-1001, "1969-12-31T23:59:59.998Z", "1969-12-31 23:59:59.998999+00"),
            (951_782_400_000_000, "2000-02-29T00:00:00.000Z", "2000-02-29 00:00:00.000000+00"),
            (1_709_251_199_999_999, "2024-02-29T23:59:59.999Z", "2024-02-29 23:59:59.999999+00"),
            (1_767_225_600_123_456, "2026-01-01T00:00:00.123Z", "2026-01-01 00:00:00.123456+00"),
            (4_107_542_400_000_000, "2100-03-01T00:00:00.000Z", "2100-03-01 00:00:00.000000+00"),
            (-2_208_988_800_000_001, "1899-12-31T23:59:59.999Z", "1899-12-31 23:59:59.999999+00"),
            (-62_130_499_200_000_000, "0001-03-01T00:00:00.000Z", "0001-03-01 00:00:00.000000+00"),
            (165_464_650_827_320_631, "7213-05-14T03:00:27.320Z", "7213-05-14 03:00:27.320631+00"),
            (-34_300_366_225_415_088, "0883-01-24T00:29:34.584Z", "0883-01-24 00:29:34.584912+00"),
            (-7_873_321_278_123_989, "1720-07-03T14:18:41.876Z", "1720-07-03 14:18:41.876011+00"),
            (61_629_480_061_079_285, "3922-12-18T04:01:01.079Z", "3922-12-18 04:01:01.079285+00"),
            (-12_590_391_510_593_320, "1571-01-10T21:01:29.406Z", "1571-01-10 21:01:29.406680+00"),
            (178_924_237_733_996_378, "7639-11-19T09:08:53.996Z", "7639-11-19 09:08:53.996378+00"),
            (-28_060_711_724_676_570, "1080-10-16T05:51:15.323Z", "1080-10-16 05:51:15.323430+00"),
        ]
    )
    func formatsLikePython(microseconds: Int64, iso: String, postgres: String) {
        let timestamp = Timestamp(microseconds: microseconds)
        #expect(timestamp.iso8601Milliseconds == iso)
        #expect(PostgresTimestamp.text(microseconds: microseconds) == postgres)
        #expect(PostgresTimestamp.microseconds(parsing: postgres) == microseconds)
        #expect(Timestamp.parseISO8601(timestamp.description) == timestamp)
        #expect(Timestamp.parseISO8601(iso)?.microseconds == timestamp.epochMilliseconds * 1000)
    }

    @Test("epoch milliseconds become the ISO text, before 1970 too")
    func epochMilliseconds() {
        #expect(Timestamp(epochMilliseconds: 1_767_225_600_000).iso8601Milliseconds == "2026-01-01T00:00:00.000Z")
        #expect(Timestamp(epochMilliseconds: 1_767_225_600_007).iso8601Milliseconds == "2026-01-01T00:00:00.007Z")
        #expect(Timestamp(epochMilliseconds: -1).iso8601Milliseconds == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp(epochMilliseconds: -86_400_000).iso8601Milliseconds == "1969-12-31T00:00:00.000Z")
        #expect(Timestamp(epochMilliseconds: 0).microseconds == 0)
        #expect(Timestamp(microseconds: -1).epochMilliseconds == -1)
        #expect(Timestamp(microseconds: 1999).epochMilliseconds == 1)
    }

    @Test("checked epoch milliseconds refuse values outside the years 0001-9999 instead of trapping")
    func checkedEpochMilliseconds() {
        #expect(Timestamp(checkedEpochMilliseconds: 1_767_225_600_000) == Timestamp(epochMilliseconds: 1_767_225_600_000))
        #expect(Timestamp(checkedEpochMilliseconds: -62_135_596_800_000) != nil)
        #expect(Timestamp(checkedEpochMilliseconds: -62_135_596_800_001) == nil)
        #expect(Timestamp(checkedEpochMilliseconds: 253_402_300_799_999) != nil)
        #expect(Timestamp(checkedEpochMilliseconds: 253_402_300_800_000) == nil)
        #expect(Timestamp(checkedEpochMilliseconds: .max) == nil)
        #expect(Timestamp(checkedEpochMilliseconds: .min) == nil)
    }

    @Test("a Date converts to the nearest microsecond and back")
    func dateConversions() {
        #expect(Timestamp(Date(timeIntervalSince1970: 1.000_000_4)).microseconds == 1_000_000)
        #expect(Timestamp(Date(timeIntervalSince1970: 1.000_000_6)).microseconds == 1_000_001)
        #expect(Timestamp(Date(timeIntervalSince1970: -0.000_000_6)).microseconds == -1)
        #expect(Timestamp(Date(timeIntervalSince1970: 1_767_225_600)).iso8601Milliseconds == "2026-01-01T00:00:00.000Z")
        // A Date's Double keeps every microsecond only within about 136 years of 2001.
        for micros: Int64 in [0, -1, 1_767_225_600_123_457, -2_208_988_800_000_001, 4_102_444_799_999_999, 978_307_200_000_001] {
            let timestamp = Timestamp(microseconds: micros)
            #expect(Timestamp(timestamp.date) == timestamp)
        }
        #expect(Timestamp(microseconds: 1_500_000).date == Date(timeIntervalSince1970: 1.5))
    }

    @Test("now is the current instant")
    func now() {
        let before = Date()
        let now = Timestamp.now
        let after = Date()
        #expect(Timestamp(before) <= now && now <= Timestamp(after))
    }

    @Test("timestamps order from past to future and hash by instant")
    func orderingAndHashing() {
        let early = Timestamp(microseconds: -5)
        let late = Timestamp(microseconds: 5)
        #expect(early < late)
        #expect([late, early].sorted() == [early, late])
        #expect(Set([early, Timestamp(microseconds: -5)]).count == 1)
        #expect(Timestamp.supportedRange.lowerBound.iso8601Milliseconds == "0001-01-01T00:00:00.000Z")
        #expect(Timestamp.supportedRange.upperBound.description == "9999-12-31T23:59:59.999999Z")
    }

    @Test("every day from 1899 to 2101 formats as the next calendar day and parses back")
    func consecutiveDays() throws {
        let day: Int64 = 86_400_000_000
        var timestamp = try #require(Timestamp.parseISO8601("1899-01-01T00:00:00Z"))
        var previous = (year: 1898, month: 12, day: 31)
        while timestamp.microseconds < 4_133_980_800_000_000 {  // 2101-01-01
            let text = timestamp.iso8601Milliseconds
            let parts = text.prefix(10).split(separator: "-").compactMap { Int($0) }
            let current = (year: parts[0], month: parts[1], day: parts[2])
            let isNextDay = current.day == previous.day + 1 && current.month == previous.month && current.year == previous.year
            let isNextMonth = current.day == 1 && (current.month == previous.month + 1 && current.year == previous.year
                || current.month == 1 && previous.month == 12 && current.year == previous.year + 1)
            #expect(isNextDay || isNextMonth, "\(text) does not follow \(previous)")
            #expect(Timestamp.parseISO8601(text) == timestamp)
            previous = current
            timestamp.microseconds += day
        }
    }

    @Test("dates agree with Foundation's Gregorian calendar from 1600 to 9999")
    func agreesWithFoundation() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        let start: Int64 = -11_676_096_000_000_000  // 1600-01-01
        let end: Int64 = 253_402_300_799_999_999
        let step = Int((end - start) / 997)
        for micros in stride(from: start, through: end, by: step) {
            let timestamp = Timestamp(microseconds: micros)
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: timestamp.date)
            let expected = String(
                format: "%04d-%02d-%02dT%02d:%02d:%02d",
                parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!, parts.second!
            )
            #expect(timestamp.iso8601Milliseconds.hasPrefix(expected))
        }
    }
}
