/// One page of the event feed (``Ledger/events(after:limit:wait:)-(EventCursor,_,_)``, `GET /v1/events`): events
/// in the catch-up reader's gap-free order, and the cursor to ask after next.
public struct EventPage: Sendable, Hashable {
    /// The events, in the reader's order (``CatchUpReader``): every event once, none skipped.
    public var events: [CatchUpReader.Event]
    /// The cursor to pass as `after` for the next page: the one this page was asked after, moved
    /// past its events.
    public var cursor: EventCursor

    /// The last event's position, or, when the page holds none, the greatest of the cursor's (0
    /// at the start). With one node group (one server, or a cluster written through its
    /// coordinator) it is the cursor; use ``cursor``, which is one on every deployment.
    public var next: Int64 { events.last?.position ?? cursor.positions.max() ?? 0 }

    public init(events: [CatchUpReader.Event], cursor: EventCursor) {
        self.events = events
        self.cursor = cursor
    }
}
