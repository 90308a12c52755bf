import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// The sweep of parked notifications (`Ledger.releaseOwnedParked`, `ledger.release_owned_parked`).
///
/// On a Citus cluster whose commands run on the workers, a payment's line can take a key's lock
/// (a row on that key's node) after a notification's commit there and read the parked
/// notifications (on the node of '') before that commit reaches them: the line records the
/// payment and leaves the notification parked. These tests make the same interleaving on one
/// server by taking the keys' locks out (`ledger.lock_keys` takes only the writers' gate), which
/// is what the window between two nodes' `COMMIT PREPARED` amounts to.
@Suite("The sweep of parked notifications")
struct ParkedSweepTests {
    typealias M = AppleMint

    static let lineAfterRefund = try! LedgerCommand(line: Array("""
        {"type":"purchase","userId":"u-1","storeCode":"AS","paymentSeq":"P-9","productId":"gems",\
        "productType":"CONSUMABLE","price":"0.99","currency":"USD","transactionId":"t-9",\
        "purchaseTime":"2026-03-01T00:00:00Z","purchaseToken":"tok-P-9"}
        """.utf8))

    static func refund(_ mint: AppleMint) throws -> LedgerCommand {
        try mint.command(M.payload(
            "REFUND", uuid: "r-1", signed: "2026-03-02T00:00:00Z",
            transaction: M.transaction("t-9", original: "t-9", product: "gems", purchase: "2026-03-01T00:00:00Z",
                                       type: "Consumable", account: nil, extra: "\"revocationDate\":\(M.ms("2026-03-02T00:00:00Z"))")))
    }

    /// A REFUND parked in a transaction still open while the SDK's line for its transaction
    /// records the payment: the line cannot see it, and once both commit the notification is
    /// parked with its owner known. Hands the database and a connection to `body`.
    static func withAMissedRelease(_ body: (TestDatabase, Connection) async throws -> Void) async throws {
        try await TestDatabase.with { db in
            let holder = try db.connect(), other = try db.connect()
            defer { [holder, other].forEach { $0.close() } }
            try other.takeTheKeysLocksOut()
            try holder.execute("BEGIN")
            #expect(try holder.executeBatch([try refund(AppleMint())]).map(\.status) == [.parked])
            #expect(try other.executeBatch([lineAfterRefund]).map(\.status) == [.recorded])
            try holder.execute("COMMIT")
            #expect(try other.count("SELECT count(*) FROM ledger.notifications WHERE parked") == 1)
            #expect(try other.count("SELECT count(*) FROM ledger.payments WHERE refunded_at IS NOT NULL") == 0)
            try await body(db, other)
        }
    }

    /// The sweep releases the notification to the payment's user, and the refund applies, as
    /// the line would have done had it met the notification; the projections equal a replay of
    /// the log, and a second sweep finds nothing. Fails without the sweep: the notification
    /// stays parked and the payment unrefunded.
    @Test func aNotificationParkedAsItsPaymentWasRecordedIsReleasedByTheSweep() async throws {
        try await Self.withAMissedRelease { db, c async throws in
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 1)
            #expect(try await ledger.releaseOwnedParked(since: Date().addingTimeInterval(-600)) == 1)
            #expect(try c.count("SELECT count(*) FROM ledger.notifications WHERE parked") == 0)
            #expect(try c.count("SELECT count(*) FROM ledger.notifications WHERE user_id = 'u-1' AND released_position IS NOT NULL") == 1)
            #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'NotificationReleased' AND user_id = 'u-1'") == 1)
            #expect(try c.count("SELECT count(*) FROM ledger.payments WHERE payment_seq = 'P-9' AND refunded_at IS NOT NULL") == 1)
            #expect(try await ledger.releaseOwnedParked() == 0)
            #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'NotificationReleased'") == 1)
            #expect(try ProjectionVerifier(connection: c).verify().isEqual, "the projections equal a replay of the log")
            await ledger.close()
        }
    }

    /// `ledger reconcile parked`, the sweep on demand: bounded by `--since`, it leaves a
    /// notification appended before that instant (the sweep `ledger serve` runs each minute
    /// reaches back only so far; its first one reaches every parked notification); without it,
    /// it releases every parked notification whose owner is known.
    @Test func reconcileParkedReleasesWhatALineMissed() async throws {
        try await Self.withAMissedRelease { db, c async throws in
            let later = try LedgerProcess.run(["reconcile", "parked", "--since", "2099-01-01T00:00:00Z", "--database-url", db.conninfo])
            #expect(later.status == 0, "\(later.stderr)")
            #expect(later.stdout == "released 0 parked notifications\n")
            #expect(try c.count("SELECT count(*) FROM ledger.notifications WHERE parked") == 1)
            let all = try LedgerProcess.run(["reconcile", "parked", "--database-url", db.conninfo])
            #expect(all.status == 0, "\(all.stderr)")
            #expect(all.stdout == "released 1 parked notification\n")
            #expect(try c.count("SELECT count(*) FROM ledger.notifications WHERE parked") == 0)
        }
    }

    /// Two releases of one notification at once, each past the keys' locks (as two commands on
    /// two workers can be, in the window between a 2PC's commits on two nodes): the second waits
    /// for the first on the parked row (`FOR UPDATE` in `ledger.release_notification`), finds it
    /// released, and releases nothing. One release, one refund. Without the row's lock the second
    /// reads the row as still parked and fails ("has no ownerless stream to release").
    @Test func twoReleasesOfOneNotificationAtOnceReleaseItOnce() async throws {
        try await Self.withAMissedRelease { db, c async throws in
            let first = try db.connect()
            defer { first.close() }
            try first.execute("BEGIN")
            let from = Int64.min
            #expect(try first.count("SELECT released::bigint FROM ledger.release_owned_parked(\(from), NULL)") == 1)
            let second = Background { () throws -> Int in
                let s = try db.connect()
                defer { s.close() }
                return try s.count("SELECT coalesce(released, -1)::bigint FROM ledger.release_owned_parked(\(from), NULL)")
            }
            let deadline = Date().addingTimeInterval(300)
            while try c.count("""
                SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                 WHERE l.locktype IN ('transactionid', 'tuple') AND NOT l.granted AND a.datname = current_database()
                """) == 0 {
                #expect(!second.isFinished, "the second release did not wait for the first")
                guard !second.isFinished, Date() < deadline else { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            try first.execute("COMMIT")
            #expect(try await second.value() == 0)
            #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'NotificationReleased'") == 1)
            #expect(try c.count("SELECT count(*) FROM ledger.events WHERE type = 'PaymentRefunded'") == 1)
            #expect(try c.count("SELECT count(*) FROM ledger.notifications WHERE parked") == 0)
            #expect(try ProjectionVerifier(connection: c).verify().isEqual, "the projections equal a replay of the log")
        }
    }
}
