/// One page of the event feed (``Ledger/events(after:limit:wait:)``, `GET /v1/events`): events
/// in the catch-up reader's gap-free order, and the position to ask after next.
public struct EventPage: Sendable, Hashable {
    /// The events, in the reader's order (``CatchUpReader``): every event once, none skipped.
    public var events: [CatchUpReader.Event]
    /// The position to pass as `after` for the next page: the last event's, or the one this page
    /// was asked after when it holds none.
    public var next: Int64

    public init(events: [CatchUpReader.Event], next: Int64) {
        self.events = events
        self.next = next
    }
}
