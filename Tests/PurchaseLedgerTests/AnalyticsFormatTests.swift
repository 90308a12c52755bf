import Foundation
import Postgres
import LedgerOutput
import PurchaseLedger
import Testing

/// How a report prints as CSV (RFC 4180) and JSON, independently of the database.
@Suite("Analytics report formats")
struct AnalyticsFormatTests {
    private struct Sample: AnalyticsRow {
        var name: String
        var count: Int
        var amount: PostgresNumeric
        var at: Date?
        static let columns = ["name", "count", "amount", "at"]
        var values: [AnalyticsValue] { [.text(name), .count(count), .decimal(amount), .time(at)] }
    }

    private let report = AnalyticsReport([
        Sample(name: "plain", count: 3, amount: "-0.99", at: Date(timeIntervalSince1970: 1_767_225_600)),
        Sample(name: "a,\"b\"", count: 0, amount: "0", at: nil),
        Sample(name: "two\nlines\r\nand CR\r", count: -1, amount: "12345678901234567890.123456789", at: nil),
        Sample(name: " spaced ", count: 1, amount: "1.10", at: nil),
    ])

    @Test func csvQuotesOnlyFieldsThatNeedItAndDoublesTheirQuotes() {
        #expect(report.csv == "name,count,amount,at\r\n"
                + "plain,3,-0.99,2026-01-01T00:00:00.000Z\r\n"
                + "\"a,\"\"b\"\"\",0,0,\r\n"
                + "\"two\nlines\r\nand CR\r\",-1,12345678901234567890.123456789,\r\n"
                + " spaced ,1,1.10,\r\n")
    }

    @Test func jsonKeysRowsByColumnWithIntegerCountsAndStringMoney() throws {
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [[String: Any]])
        #expect(parsed.count == 4)
        #expect(parsed[0]["count"] as? Int == 3 && parsed[0]["amount"] as? String == "-0.99")
        #expect(parsed[0]["at"] as? String == "2026-01-01T00:00:00.000Z")
        #expect(parsed[1]["at"] is NSNull && parsed[1]["name"] as? String == "a,\"b\"")
        #expect(parsed[2]["amount"] as? String == "12345678901234567890.123456789")
        #expect(report.json.hasPrefix(#"[{"name":"plain","count":3,"amount":"-0.99","at":"2026-01-01T00:00:00.000Z"},"#))
        #expect(AnalyticsReport([Sample]()).json == "[]")
        #expect(AnalyticsReport([Sample]()).csv == "name,count,amount,at\r\n")
    }

    @Test(arguments: ["2026-02-29", "2026-13-01", "2026-1-01", "26-01-01", "2026-01-00", "2026-01-32", "0000-01-01", "２０２６-01-01", ""])
    func calendarDayRefusesWhatIsNotARealDay(text: String) {
        #expect(CalendarDay(text) == nil)
    }

    @Test func calendarDayReadsAndPrintsRealDays() {
        #expect(CalendarDay("2024-02-29")?.description == "2024-02-29")
        #expect(CalendarDay("0001-01-01")?.description == "0001-01-01")
        #expect(CalendarDay("2026-01-31")! < CalendarDay("2026-02-01")!)
    }
}
