import Logging

extension Logger {
    /// The library's logger when its caller gives none: it drops every record, so that the
    /// library prints nothing of its own (in tests too) unless a caller passes a logger.
    static let silent = Logger(label: "PurchaseLedger", factory: { _ in SwiftLogNoOpLogHandler() })
}
