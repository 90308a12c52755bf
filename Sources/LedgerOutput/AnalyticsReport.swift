import Foundation
import Postgres
import PurchaseLedger
import LedgerJSON

/// One cell of an analytics report, typed so each output format can print it right.
public enum AnalyticsValue: Sendable, Hashable {
    /// Text: a period (`YYYY-MM-DD`), a store code, a product ID, a currency.
    case text(String)
    /// A count: an integer in JSON.
    case count(Int)
    /// Money or another exact decimal: kept as its decimal text, a string in JSON.
    case decimal(PostgresNumeric)
    /// An instant: `2026-01-01T00:00:00.000Z`, or null.
    case time(Date?)

    /// The cell as plain text (CSV and tables): empty for a null time.
    public var text: String {
        switch self {
        case .text(let text): text
        case .count(let count): String(count)
        case .decimal(let number): number.text
        case .time(let date): date.map { Timestamp(clamping: $0).iso8601Milliseconds } ?? ""
        }
    }
}

/// A row of an analytics report: named columns, in a fixed order.
public protocol AnalyticsRow: Sendable {
    /// The column names, as JSON keys and CSV header (camelCase, as in docs/contract.md §3.4).
    static var columns: [String] { get }
    /// The cells, in the order of `columns`.
    var values: [AnalyticsValue] { get }
}

/// A report as columns and typed cells, whichever report it came from.
public struct AnalyticsReport: Sendable, Hashable {
    /// The column names: JSON keys and the CSV header.
    public var columns: [String]
    /// The cells of each row, in column order.
    public var rows: [[AnalyticsValue]]

    /// The report of some rows of one kind.
    public init<Row: AnalyticsRow>(_ rows: [Row]) {
        columns = Row.columns
        self.rows = rows.map(\.values)
    }

    /// RFC 4180 CSV: a header line, then one line per row, CRLF line ends; a field holding a
    /// comma, a double quote, CR or LF is enclosed in double quotes with its quotes doubled.
    public var csv: String {
        func field(_ text: String) -> String {
            guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else {
                return text
            }
            return "\"" + text.replacing("\"", with: "\"\"") + "\""
        }
        return ([columns.map(field).joined(separator: ",")]
                + rows.map { $0.map { field($0.text) }.joined(separator: ",") })
            .map { $0 + "\r\n" }.joined()
    }

    /// A JSON array of objects keyed by the column names: counts as integers, money as strings,
    /// times as ISO-8601 strings or null.
    public var json: String {
        var w = JSONWriter()
        w.beginArray()
        for row in rows {
            w.beginObject()
            for (column, value) in zip(columns, row) {
                w.key(column)
                switch value {
                case .text(let text): w.string(text)
                case .count(let count): w.int(count)
                case .decimal(let number): w.string(number.text)
                case .time(let date):
                    if let date { w.string(Timestamp(clamping: date).iso8601Milliseconds) } else { w.null() }
                }
            }
            w.endObject()
        }
        w.endArray()
        return w.string
    }
}
