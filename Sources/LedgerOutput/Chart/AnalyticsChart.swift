import Foundation
import PurchaseLedger

/// Turns the analytics reports into line charts, for `ledger analytics ... --plot` and the
/// server's `Accept: image/svg+xml` answers: every period of the range on the x axis (a period
/// without a row counts as zero), one line per store. The backlog, a report at one instant, has
/// its products on the x axis instead, drawn as points.
public enum AnalyticsChart {
    public static func revenue(_ rows: [RevenueRow], periods: [CalendarDay], query: AnalyticsQuery) -> LineChart {
        let currencies = Set(rows.map(\.currency)).sorted()
        let stores = storesShown(rows.map(\.storeCode), query: query)
        let index = Dictionary(uniqueKeysWithValues: periods.enumerated().map { ($1, $0) })
        let panels = currencies.map { currency in
            LineChart.Panel(title: currency, yTitle: "Net revenue (\(currency))", series: stores.map { store in
                var values = [Double?](repeating: 0, count: periods.count)
                for row in rows where row.currency == currency && row.storeCode == store {
                    if let i = index[row.period] { values[i] = Double(row.net.text) ?? 0 }
                }
                return LineChart.Series(name: store.legendName, color: store.chartColor, values: values)
            })
        }
        return LineChart(
            title: "Net revenue by store, per \(query.by.rawValue)",
            subtitle: "\(rangeText(query)) · gross − refunds, one panel per currency (never converted)\(sandboxText(query))",
            xTitle: axisTitle(query), xLabels: labels(periods, by: query.by),
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
        return LineChart(
            title: "Active subscriptions by store, per \(query.by.rawValue)",
            subtitle: "\(rangeText(query)) · lineages active at the end of each \(query.by.rawValue), all products\(sandboxText(query))",
            xTitle: axisTitle(query), xLabels: labels(periods, by: query.by),
            panels: [LineChart.Panel(title: nil, yTitle: "Active subscriptions", series: series)])
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
