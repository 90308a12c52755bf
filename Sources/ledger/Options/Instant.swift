import ArgumentParser
import Foundation
import PurchaseLedger

/// An instant given on the command line: ISO-8601 with a zone (a usage error otherwise).
struct Instant: ExpressibleByArgument {
    let date: Date

    init?(argument: String) {
        guard let stamp = Timestamp.parseISO8601(argument) else { return nil }
        date = stamp.date
    }

    static var defaultCompletionKind: CompletionKind { .default }
}
