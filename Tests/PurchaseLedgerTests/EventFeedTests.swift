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
