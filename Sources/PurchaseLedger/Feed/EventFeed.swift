/// The log as an `AsyncSequence` (``Ledger/eventFeed(after:batchSize:pollInterval:)-(EventCursor,_,_)``): every
/// event after a cursor, in the catch-up reader's gap-free order, as each becomes final. It never
/// ends by itself; cancelling its task ends it (`next()` returns nil).
public struct EventFeed: AsyncSequence, Sendable {
    public typealias Element = CatchUpReader.Event

    let ledger: Ledger
    let after: EventCursor
    let batchSize: Int
    let pollInterval: Duration

    public func makeAsyncIterator() -> Iterator {
        Iterator(feed: self)
    }

    public struct Iterator: AsyncIteratorProtocol {
        let feed: EventFeed
        var reader: CatchUpReader?
        var buffered: [CatchUpReader.Event] = []
        var index = 0

        init(feed: EventFeed) {
            self.feed = feed
        }

        /// The next event; waits for one when none is final yet. Throws ``LedgerError``
        /// `INVALID_INPUT` naming `after` when no event has one of the starting cursor's positions.
        public mutating func next() async throws -> CatchUpReader.Event? {
            while index == buffered.count {
                if Task.isCancelled { return nil }
                if reader == nil { reader = try await feed.ledger.eventReader(after: feed.after, batchSize: feed.batchSize) }
                buffered = try await feed.ledger.read(&reader!)
                index = 0
                if buffered.isEmpty {
                    do { try await Task.sleep(for: feed.pollInterval) } catch { return nil }
                }
            }
            defer { index += 1 }
            return buffered[index]
        }
    }
}
