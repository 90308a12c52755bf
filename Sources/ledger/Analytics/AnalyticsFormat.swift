import ArgumentParser

/// How a report is printed.
enum AnalyticsFormat: String, ExpressibleByArgument, CaseIterable {
    case table, csv, json
}
