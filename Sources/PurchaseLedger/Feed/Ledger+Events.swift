import Postgres

extension Ledger {
    /// The most events one page of the feed holds.
    public static let maxEventPage = 1000
    /// The longest a page may wait for an event.
    public static let maxEventWait: Duration = .seconds(60)
    /// How often a waiting page or a feed looks for new final events.
    public static let eventPollInterval: Duration = .milliseconds(100)

    /// One page of the log after `cursor` (``EventCursor/start``: from the start), in the catch-up
    /// reader's gap-free order (``CatchUpReader``), at most `limit` events. When none is final yet,
    /// it looks again every ``eventPollInterval`` for up to `wait`, and answers an empty page
    /// when the time is up. The page's ``EventPage/cursor`` is where the next page starts.
    ///
    /// Throws ``LedgerError`` `INVALID_INPUT` naming `limit` or `wait` when one is out of range,
    /// or `after` when no event has one of the cursor's positions.
    public func events(after cursor: EventCursor, limit: Int = 100, wait: Duration = .zero) async throws -> EventPage {
        guard (1...Self.maxEventPage).contains(limit) else {
            throw LedgerError.invalid("limit", "expected 1 to \(Self.maxEventPage), got \(limit)")
        }
        guard wait >= .zero && wait <= Self.maxEventWait else {
            throw LedgerError.invalid("wait", "expected 0 to \(Self.maxEventWait.components.seconds) seconds, got \(wait)")
        }
        var reader = try await eventReader(after: cursor, batchSize: limit)
        let deadline = ContinuousClock.now + wait
        while true {
            let events = try await read(&reader)
            if !events.isEmpty || ContinuousClock.now >= deadline {
                return EventPage(events: events, cursor: cursor.advanced(past: events))
            }
            try await Task.sleep(for: min(Self.eventPollInterval, deadline - ContinuousClock.now))
        }
    }

    /// One page of the log after the event at `position` (0: from the start): ``events(after:limit:wait:)-(EventCursor,_,_)``
    /// with a cursor of that one position. Throws ``LedgerError`` `INVALID_INPUT` naming `after`
    /// for a negative position too.
    public func events(after position: Int64 = 0, limit: Int = 100, wait: Duration = .zero) async throws -> EventPage {
        guard position >= 0 else { throw LedgerError.invalid("after", "expected a position, 0 or more, got \(position)") }
        return try await events(after: EventCursor(position: position), limit: limit, wait: wait)
    }

    /// Every event after `cursor` (``EventCursor/start``: from the start), as each becomes final, in
    /// the catch-up reader's gap-free order; it ends when its task is cancelled. Read in batches of
    /// `batchSize`; when nothing is new it looks again every `pollInterval`.
    ///
    /// ```swift
    /// for try await event in ledger.eventFeed(after: savedCursor) {
    ///     try await handle(event)
    ///     savedCursor.advance(past: event)   // resume from here after a restart
    /// }
    /// ```
    public func eventFeed(after cursor: EventCursor = .start, batchSize: Int = 1000,
                          pollInterval: Duration = Ledger.eventPollInterval) -> EventFeed {
        EventFeed(ledger: self, after: cursor, batchSize: max(1, batchSize), pollInterval: pollInterval)
    }

    /// Every event after the event at `position`: ``eventFeed(after:batchSize:pollInterval:)-(EventCursor,_,_)`` with a
    /// cursor of that one position (on one server, the only kind).
    public func eventFeed(after position: Int64, batchSize: Int = 1000,
                          pollInterval: Duration = Ledger.eventPollInterval) -> EventFeed {
        eventFeed(after: EventCursor(position: position), batchSize: batchSize, pollInterval: pollInterval)
    }

    /// The reader that continues after `cursor`; `INVALID_INPUT` naming `after` when no event has
    /// one of its positions.
    func eventReader(after cursor: EventCursor, batchSize: Int) async throws -> CatchUpReader {
        try await pool.withConnection { try CatchUpReader.after(cursor, batchSize: batchSize, on: $0) }
    }

    /// The reader's next final events, moving it past them.
    func read(_ reader: inout CatchUpReader) async throws -> [CatchUpReader.Event] {
        let current = reader
        let (events, moved) = try await pool.withConnection { connection in
            var next = current
            return (try next.next(on: connection), next)
        }
        reader = moved
        return events
    }
}
