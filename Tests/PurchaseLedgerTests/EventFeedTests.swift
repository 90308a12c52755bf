import Foundation
import LedgerTestSupport
import PurchaseLedger
import Testing

/// The library's event feed: ``Ledger/events(after:limit:wait:)`` and ``Ledger/eventFeed(after:batchSize:pollInterval:)``.
/// Their order and completeness under concurrent writers, and across a power of ten of
/// transaction ids, are checked beside the catch-up reader's on clusters of their own
/// (ReliabilityTests: CatchUpReaderHorizonTests, CatchUpReaderXidTests).
@Suite("Event feed")
struct EventFeedTests {
    @Test(arguments: [
        (Int64(-1), 100, Duration.zero, "after"),
        (Int64(424_242), 100, Duration.zero, "after"),
        (Int64(0), 0, Duration.zero, "limit"),
        (Int64(0), 1001, Duration.zero, "limit"),
        (Int64(0), 100, Duration.seconds(61), "wait"),
        (Int64(0), 100, Duration.seconds(-1), "wait"),
    ])
    func aBadArgumentIsInvalidInputNamingIt(after: Int64, limit: Int, wait: Duration, field: String) async throws {
        try await TestDatabase.with { db in
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 1)
            defer { Task { await ledger.close() } }
            do {
                _ = try await ledger.events(after: after, limit: limit, wait: wait)
                Issue.record("accepted after \(after), limit \(limit), wait \(wait)")
            } catch let error as LedgerError {
                #expect(error.code == .invalidInput)
                #expect(error.message.hasPrefix(field + ":"), "\(error.message)")
            }
        }
    }

    /// A cursor's text: positions joined by commas, one per node group (`position >> 48`), `0` the
    /// start; anything else is refused naming the field, before the database is asked.
    @Test func aCursorIsOnePositionPerNodeGroup() throws {
        #expect(try EventCursor(parsing: "0") == .start && EventCursor.start.description == "0")
        #expect(try EventCursor(parsing: "17").positions == [17])
        let mixed = try EventCursor(parsing: "562949953421313,17,281474976710660")
        #expect(mixed.positions == [17, 281474976710660, 562949953421313])
        #expect(mixed.description == "17,281474976710660,562949953421313")
        #expect(try EventCursor(parsing: mixed.description) == mixed)
        #expect(try EventCursor(parsing: "0,17") == EventCursor(position: 17))
        for bad in ["", "a", "1,", ",1", "+1", "-1", " 1", "1,2", "281474976710657,281474976710999", "99999999999999999999",
                    String(repeating: "1,", count: 2000) + "1"] {
            #expect(throws: LedgerError.self, "accepted \"\(bad.prefix(40))\"") { _ = try EventCursor(parsing: bad, field: "cursor") }
            do { _ = try EventCursor(parsing: bad, field: "cursor") } catch {
                #expect(error.code == .invalidInput && error.message.hasPrefix("cursor:"), "\(error.message)")
            }
        }
        // Moving past events keeps one position per group, in group order.
        var cursor = EventCursor(position: 5)
        func event(_ position: Int64) -> CatchUpReader.Event {
            CatchUpReader.Event(position: position, transaction: 1, stream: "s", version: 1, type: "T", data: "{}",
                                occurredAt: Date(), recordedAt: Date())
        }
        cursor.advance(past: event(562949953421400))
        cursor.advance(past: event(3))
        #expect(cursor.positions == [3, 562949953421400])
        #expect(cursor.advanced(past: [event(281474976710700), event(9)]).description == "9,281474976710700,562949953421400")
    }

    @Test func aFeedYieldsWhatIsAppendedAndEndsWhenItsTaskIsCancelled() async throws {
        try await TestDatabase.with { db in
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 2)
            let (yielded, continuation) = AsyncStream.makeStream(of: String.self)
            let follower = Task {
                var count = 0
                for try await event in ledger.eventFeed(pollInterval: .milliseconds(5)) {
                    continuation.yield(event.stream)
                    count += 1
                }
                continuation.finish()
                return count
            }
            _ = try db.withConnection { try $0.ingest([Fixture.purchaseLine()]) }
            // The event is final once every older write transaction on the test server has ended;
            // should one never end, the feed is cancelled and the next expectation fails.
            let watchdog = Task { try await Task.sleep(for: .seconds(600)); follower.cancel() }
            defer { watchdog.cancel() }
            var streams = yielded.makeAsyncIterator()
            #expect(await streams.next() == "payment:P-1")
            // Nothing more comes; cancelling the task ends the sequence instead of throwing.
            follower.cancel()
            #expect(try await follower.value == 1)
            #expect(await streams.next() == nil)
            await ledger.close()
        }
    }
}
