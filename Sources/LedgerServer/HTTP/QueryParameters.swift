import Foundation
import Hummingbird
import PurchaseLedger

/// Reads query-string parameters with the CLI's rules; a bad one is 400 naming the parameter.
struct QueryParameters {
    let parameters: Hummingbird.Parameters

    init(_ request: Request) {
        parameters = request.uri.queryParameters
    }

    /// `store=AS&store=GG` or `store=AS,GG`; empty when absent.
    func stores() throws -> Set<StoreCode> {
        var stores: Set<StoreCode> = []
        for value in parameters.getAll("store") {
            for code in value.split(separator: ",") {
                guard let store = StoreCode(rawValue: String(code)) else {
                    throw APIError(.badRequest, LedgerError.Code.unknownStore.rawValue, "store: expected AS or GG, got '\(code)'")
                }
                stores.insert(store)
            }
        }
        return stores
    }

    /// An instant: ISO-8601 with a zone.
    func instant(_ name: String) throws -> Date? {
        guard let text = parameters.get(name) else { return nil }
        guard let stamp = Timestamp.parseISO8601(String(text)) else {
            throw APIError.invalid(name, "expected ISO-8601 with a zone, such as 2026-01-15T00:00:00Z, got '\(text)'")
        }
        return stamp.date
    }

    /// `true`/`false` (also `1`/`0`); `false` when absent.
    func flag(_ name: String) throws -> Bool {
        guard let text = parameters.get(name) else { return false }
        switch text {
        case "true", "1": return true
        case "false", "0": return false
        default: throw APIError.invalid(name, "expected true or false, got '\(text)'")
        }
    }

    /// A UTC day, `YYYY-MM-DD`.
    func day(_ name: String) throws -> CalendarDay {
        guard let text = parameters.get(name) else { throw APIError.invalid(name, "required, a day as YYYY-MM-DD") }
        guard let day = CalendarDay(String(text)) else {
            throw APIError.invalid(name, "expected a day as YYYY-MM-DD, got '\(text)'")
        }
        return day
    }

    /// A whole number in `range`; `defaultValue` when absent.
    func integer(_ name: String, default defaultValue: Int64, in range: ClosedRange<Int64>) throws -> Int64 {
        guard let text = parameters.get(name) else { return defaultValue }
        guard let value = Int64(String(text)), range.contains(value) else {
            throw APIError.invalid(name, "expected a whole number from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
        }
        return value
    }

    /// The event feed's cursor (``EventCursor``): positions joined by commas; the start when absent.
    func cursor(_ name: String) throws -> EventCursor {
        guard let text = parameters.get(name) else { return .start }
        do {
            return try EventCursor(parsing: text, field: name)
        } catch {
            throw APIError(error)
        }
    }
}
