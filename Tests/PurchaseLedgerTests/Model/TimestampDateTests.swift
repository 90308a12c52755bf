import Foundation
import Postgres
import PurchaseLedger
import Testing

/// A `Date` is a `Double` of seconds since 2001: about 30 µs apart in the year 9999. Every time
/// the ledger prints (whole milliseconds) must still survive the trip through a `Date`, and
/// nothing in the years 0001 to 9999 may become the year 10000.
@Suite("Timestamp and Date: whole milliseconds survive, the years stay 0001 to 9999")
struct TimestampDateTests {
    static let first = Timestamp.supportedRange.lowerBound.microseconds
    static let last = Timestamp.supportedRange.upperBound.microseconds

    /// Edges, and 100,000 whole milliseconds spread over the whole range (a fixed LCG).
    static var milliseconds: [Int64] {
        let firstMs = first / 1000, lastMs = last / 1000
        var values = Array(firstMs...(firstMs + 1000)) + Array((lastMs - 1000)...lastMs)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<100_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            values.append(firstMs + Int64((state >> 11) % UInt64(lastMs - firstMs + 1)))
        }
        return values
    }

    @Test func everyWholeMillisecondComesBackFromItsDate() {
        var wrong: [Int64] = []
        for ms in Self.milliseconds {
            let timestamp = Timestamp(microseconds: ms * 1000)
            if Timestamp(timestamp.date) != timestamp { wrong.append(ms) }
        }
        #expect(wrong.isEmpty, "\(wrong.count) wrong, such as \(wrong.prefix(3).map { Timestamp(microseconds: $0 * 1000) })")
    }

    @Test func everyWholeMillisecondIsBoundAsItself() throws {
        for ms in Self.milliseconds.prefix(3000) {
            let timestamp = Timestamp(microseconds: ms * 1000)
            #expect(try timestamp.date.postgresValue() == .text(PostgresTimestamp.text(microseconds: timestamp.microseconds)))
        }
    }

    @Test func everyMicrosecondNearTwoThousandOneComesBack() {
        // 1900 to 2100: a Date's step is under a microsecond.
        var state: UInt64 = 42
        for _ in 0..<100_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let micros = -2_208_988_800_000_000 + Int64((state >> 11) % 6_311_390_400_000_000)
            let timestamp = Timestamp(microseconds: micros)
            #expect(Timestamp(timestamp.date) == timestamp)
        }
    }

    @Test func theLastMicrosecondsOf9999NeverBecomeTheYear10000() {
        for micros in (Self.last - 100)...Self.last {
            let back = Timestamp(Timestamp(microseconds: micros).date)
            #expect(back <= Timestamp.supportedRange.upperBound, "\(Timestamp(microseconds: micros)) became \(back)")
            #expect(Self.last - back.microseconds < 100, "\(back) is far from \(Timestamp(microseconds: micros))")
            #expect(Timestamp(clamping: Timestamp(microseconds: micros).date).iso8601Milliseconds == "9999-12-31T23:59:59.999Z")
        }
        for micros in Self.first...(Self.first + 100) {
            #expect(Timestamp(Timestamp(microseconds: micros).date) >= Timestamp.supportedRange.lowerBound)
        }
    }

    @Test func printingNeverShowsAYearTheLedgerRefuses() {
        let year10000 = Date(timeIntervalSince1970: 253_402_300_800)
        #expect(Timestamp(clamping: year10000).iso8601Milliseconds == "9999-12-31T23:59:59.999Z")
        #expect(Timestamp(clamping: Date(timeIntervalSince1970: 1e15)).iso8601Milliseconds == "9999-12-31T23:59:59.999Z")
        #expect(Timestamp(clamping: Date(timeIntervalSince1970: -62_135_596_801)).iso8601Milliseconds == "0001-01-01T00:00:00.000Z")
        #expect(Timestamp(clamping: Date.distantPast).iso8601Milliseconds == "0001-01-01T00:00:00.000Z")
        for date in [year10000, Date(timeIntervalSince1970: 1e15), .distantPast, .distantFuture] {
            #expect(Timestamp.parseISO8601(Timestamp(clamping: date).iso8601Milliseconds) != nil)
        }
    }
}
