import Foundation
import Postgres
import PurchaseLedger

/// Turns the analytics reports into line charts, for `ledger analytics ... --plot` and the
/// server's `Accept: image/svg+xml` answers: every period of the range on the x axis (a period
/// without a row counts as zero), one line per store. The backlog, a report at one instant, has
/// its products on the x axis instead, drawn as points.
public enum AnalyticsChart {
    public static func revenue(_ rows: [RevenueRow], periods: [CalendarDay], query: AnalyticsQuery) -> LineChart {
        let panels = moneyPanels(rows.map { ($0.period, $0.storeCode, $0.currency, $0.net) }, periods: periods,
                                 query: query, yTitle: "Net revenue")
        return overPeriods("Net revenue by store", "gross − refunds, one panel per currency (never converted)", periods, query,
                           panels: panels.isEmpty ? [LineChart.Panel(title: "No payments", yTitle: "Net revenue", series: [])] : panels)
    }

    public static func subscribers(_ rows: [SubscribersRow], periods: [CalendarDay], query: AnalyticsQuery) -> LineChart {
        let stores = storesShown(rows.map(\.storeCode), query: query)
        let index = Dictionary(uniqueKeysWithValues: periods.enumerated().map { ($1, $0) })
        let series = stores.map { store in
            var values = [Double?](repeating: 0, count: periods.count)
            for row in rows where row.storeCode == store {
                if let i = index[row.period] { values[i] = (values[i] ?? 0) + Double(row.active) }
            }
            return LineChart.Series(name: store.legendName, color: store.chartColor, values: values)
        }
        return overPeriods("Active subscriptions by store", "lineages active at the end of each \(query.by.rawValue), all products", periods, query,
                           panels: [LineChart.Panel(title: nil, yTitle: "Active subscriptions", series: series)])
    }

    /// Churned lineages (voluntary, involuntary and revoked together) and started ones, per store,
    /// all products together.
    public static func churn(_ rows: [ChurnRow], periods: [CalendarDay], query: AnalyticsQuery) -> LineChart {
        let stores = storesShown(rows.map(\.storeCode), query: query)
        let index = Dictionary(uniqueKeysWithValues: periods.enumerated().map { ($1, $0) })
        func panel(_ title: String, _ count: KeyPath<ChurnRow, Int>) -> LineChart.Panel {
            LineChart.Panel(title: title, yTitle: "Lineages", series: stores.map { store in
                var values = [Double?](repeating: 0, count: periods.count)
                for row in rows where row.storeCode == store {
                    if let i = index[row.period] { values[i] = (values[i] ?? 0) + Double(row[keyPath: count]) }
                }
                return LineChart.Series(name: store.legendName, color: store.chartColor, values: values)
            })
        }
        return overPeriods("Churn by store", "lineages whose access ended with nothing extending it, all products", periods, query,
                           panels: [panel("Churned (voluntary, involuntary, revoked)", \.churned), panel("Started", \.started)])
    }

    /// Refunded amounts per store, one panel per currency (never converted), by refund time.
    public static func refunds(_ rows: [RefundsRow], periods: [CalendarDay], query: AnalyticsQuery) -> LineChart {
        let panels = moneyPanels(rows.map { ($0.period, $0.storeCode, $0.currency, $0.amount) }, periods: periods,
                                 query: query, yTitle: "Refunded")
        return overPeriods("Refunds by store", "refunded prices by refund time, one panel per currency (never converted)", periods, query,
                           panels: panels.isEmpty ? [LineChart.Panel(title: "No refunds", yTitle: "Refunded", series: [])] : panels)
    }

    /// The backlog at one instant: its products on the x axis (store, then product id), drawn as
    /// points, with how many payments wait and the median and 95th-percentile age in days.
    public static func backlog(_ rows: [BacklogRow], at instant: Date, stores: Set<StoreCode>,
                               includeSandbox: Bool) -> LineChart {
        let sorted = rows.sorted { ($0.storeCode, $0.productId) < ($1.storeCode, $1.productId) }
        let shown = stores.isEmpty ? Set(sorted.map(\.storeCode)).sorted() : stores.sorted()
        func series(_ value: @escaping (BacklogRow) -> Double) -> [LineChart.Series] {
            shown.map { store in
                LineChart.Series(name: store.legendName, color: store.chartColor,
                                 values: sorted.map { $0.storeCode == store ? value($0) : nil }, joined: false)
            }
        }
        let day = 86_400.0
        let at = Timestamp(clamping: instant).iso8601Milliseconds
        return LineChart(
            title: "Backlog: goods paid for, not handed out",
            subtitle: "at \(at) · unconsumed consumable payments per product, and their age\(includeSandbox ? " · sandbox included" : "")",
            xTitle: "Product",
            xLabels: sorted.map { LineChart.XLabel(text: shortened($0.productId), group: nil) },
            panels: sorted.isEmpty ? [LineChart.Panel(title: "No unconsumed payments", yTitle: "Payments", series: [])] : [
                LineChart.Panel(title: "Unconsumed payments", yTitle: "Payments", series: series { Double($0.unconsumed) }),
                LineChart.Panel(title: "Median age (days)", yTitle: "Days", series: series { Double($0.medianAgeSeconds) / day }),
                LineChart.Panel(title: "95th-percentile age (days)", yTitle: "Days", series: series { Double($0.p95AgeSeconds) / day }),
            ])
    }

    /// A product id short enough for its place under the axis.
    private static func shortened(_ text: String) -> String {
        text.count <= 14 ? text : text.prefix(13) + "…"
    }

    /// One panel per currency (never converted), one line per store: each (period, store,
    /// currency) amount at its period's place, zero where a period has none.
    private static func moneyPanels(_ amounts: [(period: CalendarDay, store: StoreCode, currency: String, amount: PostgresNumeric)],
                                    periods: [CalendarDay], query: AnalyticsQuery, yTitle: String) -> [LineChart.Panel] {
        let currencies = Set(amounts.map(\.currency)).sorted()
        let stores = storesShown(amounts.map(\.store), query: query)
        let index = Dictionary(uniqueKeysWithValues: periods.enumerated().map { ($1, $0) })
        return currencies.map { currency in
            LineChart.Panel(title: currency, yTitle: "\(yTitle) (\(currency))", series: stores.map { store in
                var values = [Double?](repeating: 0, count: periods.count)
                for row in amounts where row.currency == currency && row.store == store {
                    if let i = index[row.period] { values[i] = Double(row.amount.text) ?? 0 }
                }
                return LineChart.Series(name: store.legendName, color: store.chartColor, values: values)
            })
        }
    }

    /// A chart over the range's periods: its title per period, the range and what it shows
    /// (`about`) under it, the periods along the x axis.
    private static func overPeriods(_ title: String, _ about: String, _ periods: [CalendarDay], _ query: AnalyticsQuery,
                                    panels: [LineChart.Panel]) -> LineChart {
        LineChart(title: "\(title), per \(query.by.rawValue)", subtitle: "\(rangeText(query)) · \(about)\(sandboxText(query))",
                  xTitle: axisTitle(query), xLabels: labels(periods, by: query.by), panels: panels)
    }

    /// The stores asked for, or those with data; at least one line per store asked for.
    private static func storesShown(_ present: [StoreCode], query: AnalyticsQuery) -> [StoreCode] {
        query.stores.isEmpty ? Set(present).sorted() : query.stores.sorted()
    }

    private static func rangeText(_ query: AnalyticsQuery) -> String {
        "\(query.from) to \(query.to) (exclusive), UTC"
    }

    private static func sandboxText(_ query: AnalyticsQuery) -> String {
        query.includeSandbox ? " · sandbox included" : ""
    }

    private static func axisTitle(_ query: AnalyticsQuery) -> String {
        query.by == .day ? "Day (UTC)" : "Month (UTC)"
    }

    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Jan 5` per day or `Jan` per month, with the year as the group the chart shows under a
    /// label when it changes.
    public static func labels(_ periods: [CalendarDay], by: AnalyticsPeriod) -> [LineChart.XLabel] {
        periods.map { day in
            let month = monthNames[day.month - 1]
            return LineChart.XLabel(text: by == .day ? "\(month) \(day.day)" : month, group: String(day.year))
        }
    }
}
