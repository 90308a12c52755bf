/// The most one report may ask for, so that no reader can hold the database with one request.
///
/// The work of a report grows with its periods (each counted for every store and product) and
/// its answer with its rows; neither is bounded by the data alone (subscribers from 0001-01-01 to
/// 9999-12-31 by day is 3.65 million periods). The limits are far above what a person reads or
/// a chart shows: three years of days, a century of months, 100,000 rows. The library's report
/// calls, `ledger analytics` and `ledger serve` all apply these, so each says the same.
public enum AnalyticsLimits {
    /// Periods of a report by day at most: three years, a leap day included.
    public static let maxDays = 1_096
    /// Periods of a report by month at most: a century.
    public static let maxMonths = 1_200
    /// Rows of a report's answer at most (periods × stores × products or currencies).
    public static let maxRows = 100_000

    /// The parameter a query must change (`to`, `from` or `by`) and why, or nil when it is within
    /// the limits. Checked before the database is asked.
    public static func refusal(_ query: AnalyticsQuery) -> (field: String, problem: String)? {
        guard query.from < query.to else {
            return ("to", "must be later than from (\(query.from)): to is exclusive")
        }
        let periods = query.periodCount
        switch query.by {
        case .day where periods > maxDays:
            return ("to", "a report by day covers at most \(maxDays) days (three years); \(query.from) to \(query.to) "
                    + "is \(periods) days: ask by month, or for a shorter range")
        case .month where periods > maxMonths:
            return ("to", "a report by month covers at most \(maxMonths) months (a century); \(query.from) to \(query.to) "
                    + "is \(periods) months: ask for a shorter range")
        default:
            return nil
        }
    }

    /// ``refusal(_:)`` as the library throws it: `INVALID_INPUT` naming the parameter.
    static func check(_ query: AnalyticsQuery) throws {
        if let refused = refusal(query) { throw LedgerError.invalid(refused.field, refused.problem) }
    }

    /// `rows` when there are at most ``maxRows`` of them (a report reads one more to know);
    /// else `INVALID_INPUT` naming what to narrow.
    static func capped<Row>(_ rows: [Row], _ query: AnalyticsQuery) throws -> [Row] {
        guard rows.count > maxRows else { return rows }
        let narrower = query.by == .day ? "ask by month, for a shorter range or for one store" : "ask for a shorter range or for one store"
        throw LedgerError.invalid(query.by == .day ? "by" : "to",
                                  "the report from \(query.from) to \(query.to) by \(query.by.rawValue) has more than "
                                  + "\(maxRows) rows (periods × stores × products or currencies): \(narrower)")
    }

    /// The backlog's `rows` when there are at most ``maxRows`` (stores × products); else
    /// `INVALID_INPUT` naming `store`.
    static func cappedBacklog(_ rows: [BacklogRow]) throws -> [BacklogRow] {
        guard rows.count > maxRows else { return rows }
        throw LedgerError.invalid("store", "the backlog has more than \(maxRows) rows (stores × products): ask for one store")
    }
}
