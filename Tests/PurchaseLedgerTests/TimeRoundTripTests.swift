import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// What the ledger prints must be accepted back and mean the same instant: for every time field
/// of every command, a printed time goes in through the same path as `ledger ingest`, is stored
/// as exactly that instant (PostgreSQL's own reading of the text is the judge), and prints again
/// unchanged.
@Suite("Every printed time is accepted back as the same instant")
struct TimeRoundTripTests {
    /// Printed times: ordinary, the first and last the ledger accepts, and far from 2001, where a
    /// `Date` cannot hold every microsecond.
    static let printed = [
        "2026-03-04T05:06:07.089Z", "9999-12-31T23:59:59.999Z", "9999-06-15T12:34:56.789Z",
        "1492-10-12T03:04:05.678Z", "0001-01-01T00:00:00.000Z", "0001-01-01T00:00:00.001Z",
    ]

    @Test(arguments: printed)
    func everyTimeFieldOfEveryCommandKeepsAPrintedTime(time: String) async throws {
        let instant = try #require(Timestamp.parseISO8601(time))
        // A millisecond either side, when the ledger accepts it.
        let before = Self.neighbour(instant, -1000), after = Self.neighbour(instant, 1000)
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                var lines = [
                    Fixture.purchaseLine(["paymentSeq": "\"C-1\"", "transactionId": "\"C-1\"", "purchaseTime": "\"\(time)\""]),
                    Fixture.purchaseLine(["paymentSeq": "\"C-2\"", "transactionId": "\"C-2\"", "purchaseTime": "\"\(time)\""]),
                    #"{"type":"consume","userId":"u1","paymentSeq":"C-1","purchaseToken":"tok-1","time":"\#(time)"}"#,
                    #"{"type":"refund","paymentSeq":"C-2","time":"\#(time)"}"#,
                    #"{"type":"restore","userId":"u1","storeCode":"AS","time":"\#(time)","purchases":[\#(Fixture.purchaseLine(["type": nil, "paymentSeq": "\"R-1\"", "transactionId": "\"R-1\"", "purchaseTime": "\"\(time)\""]))]}"#,
                ]
                if let after {  // a lineage that starts at the time, and a cancel at it
                    lines.append(Self.subscriptionLine("S-1", from: time, to: after))
                    lines.append(#"{"type":"cancel","storeCode":"AS","originalTransactionId":"S-1","time":"\#(time)"}"#)
                }
                if let before {  // a lineage that expires at the time, restored
                    let item = Self.subscriptionLine("S-2", from: before, to: time, type: nil)
                    lines.append(#"{"type":"restore","userId":"u1","storeCode":"GG","time":"\#(time)","purchases":[\#(item)]}"#)
                }
                let results = try c.ingest(lines)
                #expect(results.allSatisfy { $0.status != .rejected }, "\(results.compactMap(\.error))")

                // Stored as that very instant.
                #expect(try Self.matches(c, "ledger.payments", "purchase_time", time) == (after == nil ? 3 : 4))
                #expect(try Self.matches(c, "ledger.payments", "consumed_at", time) == 1)
                #expect(try Self.matches(c, "ledger.payments", "refunded_at", time) == 1)
                #expect(try Self.matches(c, "ledger.restores", "restored_at", time) == (before == nil ? 1 : 2))
                #expect(try Self.matches(c, "ledger.payments", "expiry_time", time) == (before == nil ? 0 : 1))
                #expect(try Self.matches(c, "ledger.auto_renew_changes", "changed_at", time) == (after == nil ? 0 : 1))

                // Printed back unchanged.
                let unconsumed = try UnconsumedPayment.fetchAll(c, userId: "u1")
                #expect(unconsumed.map { $0.purchaseTime.ledgerText } == [time])
                let again = try c.ingest([#"{"type":"consume","userId":"u1","paymentSeq":"C-1","purchaseToken":"tok-1"}"#])
                #expect(again.first?.status == .alreadyConsumed && again.first?.consumedAt?.ledgerText == time)

                // `subscriptions --at` reads the time the same way: a lineage counts from its
                // first payment's instant on, and not a millisecond before.
                if let after {
                    let at = try #require(Timestamp.parseISO8601(time)).date
                    let lineage = try Subscription.fetchAll(c, userId: "u1", stores: [.appStore], at: at, includeExpired: true)
                    #expect(lineage.map { $0.purchaseTime.ledgerText } == [time])
                    #expect(lineage.map { $0.expiryTime?.ledgerText } == [after])
                    #expect(lineage.first?.autoRenewing == false && lineage.first?.status == .active)
                    if let before {
                        let earlier = try #require(Timestamp.parseISO8601(before)).date
                        #expect(try Subscription.fetchAll(c, userId: "u1", stores: [.appStore], at: earlier, includeExpired: true).isEmpty)
                    }
                }
                if let before {
                    let earlier = try #require(Timestamp.parseISO8601(before)).date
                    let expiring = try Subscription.fetchAll(c, userId: "u1", stores: [.googlePlay], at: earlier)
                    #expect(expiring.map { $0.expiryTime?.ledgerText } == [time])
                    #expect(expiring.first?.purchaseTime.ledgerText == before)
                    let at = try #require(Timestamp.parseISO8601(time)).date
                    #expect(try Subscription.fetchAll(c, userId: "u1", stores: [.googlePlay], at: at).isEmpty, "expired at its expiry")
                }
            }
        }
    }

    @Test func digitsBeyondTheMicrosecondAreTruncatedNotRounded() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let results = try c.ingest([
                    Fixture.purchaseLine(["paymentSeq": "\"A\"", "transactionId": "\"A\"", "purchaseTime": "\"2026-01-01T00:00:00.123456789Z\""]),
                    Fixture.purchaseLine(["paymentSeq": "\"B\"", "transactionId": "\"B\"", "purchaseTime": "\"9999-12-31T23:59:59.999999999Z\""]),
                ])
                #expect(results.map(\.status) == [.recorded, .recorded], "\(results.compactMap(\.error))")
                #expect(try Self.matches(c, "ledger.payments", "purchase_time", "2026-01-01T00:00:00.123456Z") == 1)
                #expect(try c.count("SELECT count(*) FROM ledger.payments WHERE purchase_time < '10000-01-01Z'") == 2)
                let printed = try UnconsumedPayment.fetchAll(c, userId: "u1").map { $0.purchaseTime.ledgerText }
                #expect(printed == ["2026-01-01T00:00:00.123Z", "9999-12-31T23:59:59.999Z"])
                // …and what it printed goes back in.
                let back = try c.ingest([Fixture.purchaseLine(["paymentSeq": "\"C\"", "transactionId": "\"C\"", "purchaseTime": "\"\(printed[1])\""])])
                #expect(back.first?.status == .recorded, "\(back.compactMap(\.error))")
                #expect(try Self.matches(c, "ledger.payments", "purchase_time", printed[1]) == 1)
            }
        }
    }

    /// How many rows of `table` hold `column` equal to PostgreSQL's own reading of `time`.
    static func matches(_ c: Connection, _ table: String, _ column: String, _ time: String) throws -> Int {
        try c.query("SELECT count(*)::bigint AS n FROM \(unsafeSQL: table) WHERE \(unsafeSQL: column) = \(time)::timestamptz")[0]
            .decode("n", as: Int.self)
    }

    /// The printed time `micros` microseconds away, or nil outside the years 0001 to 9999.
    static func neighbour(_ instant: Timestamp, _ micros: Int64) -> String? {
        let other = Timestamp(microseconds: instant.microseconds + micros)
        return Timestamp.supportedRange.contains(other) ? other.iso8601Milliseconds : nil
    }

    /// A first `AUTO_RENEWABLE` payment of lineage `seq` (a restore item when `type` is nil).
    static func subscriptionLine(_ seq: String, from: String, to: String, type: String? = "\"purchase\"") -> String {
        Fixture.purchaseLine([
            "type": type, "paymentSeq": "\"\(seq)\"", "transactionId": "\"\(seq)\"", "productId": "\"vip\"",
            "productType": "\"AUTO_RENEWABLE\"", "purchaseTime": "\"\(from)\"", "expiryTime": "\"\(to)\"",
            "storeCode": type == nil ? nil : "\"AS\"", "purchaseToken": "\"tok-\(seq)\"",
        ])
    }
}
