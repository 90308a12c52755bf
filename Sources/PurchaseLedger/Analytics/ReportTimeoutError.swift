/// A report ran longer than the ledger's report timeout and the database stopped it.
///
/// Asking again costs the same: a shorter range, months instead of days or one store cost less.
public struct ReportTimeoutError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The timeout it ran into.
    public var timeout: Duration

    public init(timeout: Duration) {
        self.timeout = timeout
    }

    /// One line, for example `the report ran longer than the report timeout (30 s) and was stopped: …`.
    public var description: String {
        "the report ran longer than the report timeout (\(Self.seconds(timeout)) s) and was stopped: "
            + "ask for a shorter range, by month or for one store"
    }

    /// `30`, `0.5`: seconds as a person writes them.
    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = attoseconds / 1_000_000_000_000_000
        guard milliseconds > 0 else { return String(seconds) }
        var fraction = String(milliseconds)
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(seconds).\(fraction)"
    }
}
