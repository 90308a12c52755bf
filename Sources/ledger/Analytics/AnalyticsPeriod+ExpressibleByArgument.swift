import ArgumentParser
import PurchaseLedger

/// `day` or `month` on the command line.
extension AnalyticsPeriod: ExpressibleByArgument {}
