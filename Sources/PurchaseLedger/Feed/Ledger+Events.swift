import Postgres

extension Ledger {
    /// The most events one page of the feed holds.
    public static let maxEventPage = 1000
    /// The longest a page may wait for an event.
    public static let maxEventWait: Duration = .seconds(60)
    /// How often a waiting page or a feed looks for new final events.
    public static let eventPollInterval: Duration = .milliseconds(100)

    /// One page of the log after the event at `position` (0: from the start), in the catch-up
    /// reader's gap-free order (``CatchUpReader``), at most `limit` events. When none is final yet,
    /// it looks again every ``eventPollInterval`` for up to `wait`, and answers an empty page
    /// when the time is up.
    ///
    /// Throws ``LedgerError`` `INVALID_INPUT` naming `after`, `limit` or `wait` when one is out of
    /// range, or `after` when no event has that position.
    public func events(after position: Int64 = 0, limit: Int = 100, wait: Duration = .zero) async throws -> EventPage {
        guard position >= 0 else { throw LedgerError.invalid("after", "expected a position, 0 or more, got \(position)") }
        guard (1...Self.maxEventPage).contains(limit) else {
            throw LedgerError.invalid("limit", "expected 1 to \(Self.maxEventPage), got \(limit)")
        }
        guard wait >= .zero && wait <= Self.maxEventWait else {
            throw LedgerError.invalid("wait", "expected 0 to \(Self.maxEventWait.components.seconds) seconds, got \(wait)")
        }
        var reader = try await eventReader(after: position, batchSize: limit)
        let deadline = ContinuousClock.now + wait
        while true {
            let events = try await read(&reader)
            if !events.isEmpty || ContinuousClock.now >= deadline {
                return EventPage(events: events, next: events.last?.position ?? position)
            }
            try await Task.sleep(for: min(Self.eventPollInterval, deadline - ContinuousClock.now))
        }
    }

    /// Every event after the event at `position` (0: from the start), as each becomes final, in
    /// the catch-up reader's gap-free order; it ends when its task is cancelled. Read in batches of
    /// `batchSize`; when nothing is new it looks again every `pollInterval`.
    ///
    /// ```swift
    /// for try await event in ledger.eventFeed(after: savedPosition) {
    ///     try await handle(event)
    ///     savedPosition = event.position   // resume from here after a restart
    /// }
    /// ```
    public func eventFeed(after position: Int64 = 0, batchSize: Int = 1000,
                          pollInterval: Duration = Ledger.eventPollInterval) -> EventFeed {
        EventFeed(ledger: self, after: position, batchSize: max(1, batchSize), pollInterval: pollInterval)
    }

    /// The reader that continues after `position`; `INVALID_INPUT` naming `after` when no event has it.
    func eventReader(after position: Int64, batchSize: Int) async throws -> CatchUpReader {
        let reader = try await pool.withConnection { try CatchUpReader.after(position: position, batchSize: batchSize, on: $0) }
        guard let reader else { throw LedgerError.invalid("after", "no event has position \(position)") }
        return reader
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
