import ArgumentParser
import PurchaseLedger

/// `AS` or `GG` on the command line.
extension StoreCode: ExpressibleByArgument {}
