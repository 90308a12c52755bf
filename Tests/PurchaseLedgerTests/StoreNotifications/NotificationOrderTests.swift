import LedgerDemo
import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// Stores deliver late, twice and out of order: any arrival order of a lineage's notifications
/// must give the same `subscriptions` answers at every instant as the order they were signed in.
@Suite("Notification arrival order")
struct NotificationOrderTests {
    typealias M = AppleMint

    /// One lineage's history, its ids prefixed by `k` so that every ordering gets its own lineage.
    static func history(_ k: String, _ mint: AppleMint) -> [String] {
        func tx(_ n: Int, _ from: String, _ to: String, extra: String = "") -> String {
            M.transaction("\(k)0\(n)", original: "\(k)00", purchase: from, expires: to, account: "acct-\(k)", extra: extra)
        }
        let first = tx(0, "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z")
        let second = tx(1, "2026-04-01T00:00:00Z", "2026-05-01T00:00:00Z")
        let third = tx(2, "2026-05-20T00:00:00Z", "2026-06-20T00:00:00Z")
        return [
            M.payload("SUBSCRIBED", uuid: "\(k)-1", signed: "2026-03-01T00:00:00Z", transaction: first),
            M.payload("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", uuid: "\(k)-2", signed: "2026-03-10T00:00:00Z", transaction: first),
            M.payload("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED", uuid: "\(k)-3", signed: "2026-03-20T00:00:00Z", transaction: first),
            M.payload("DID_RENEW", uuid: "\(k)-4", signed: "2026-04-01T00:00:00Z", transaction: second),
            M.payload("DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", uuid: "\(k)-5", signed: "2026-05-01T00:00:00Z", transaction: second,
                      renewal: M.renewal(original: "\(k)00", grace: "2026-05-08T00:00:00Z", signed: "2026-05-01T00:00:00Z")),
            M.payload("GRACE_PERIOD_EXPIRED", uuid: "\(k)-6", signed: "2026-05-08T00:00:00Z", transaction: second),
            M.payload("DID_RENEW", subtype: "BILLING_RECOVERY", uuid: "\(k)-7", signed: "2026-05-20T00:00:00Z", transaction: third),
            M.payload("REFUND", uuid: "\(k)-8", signed: "2026-06-01T00:00:00Z",
                      transaction: tx(2, "2026-05-20T00:00:00Z", "2026-06-20T00:00:00Z",
                                      extra: "\"revocationDate\":\(M.ms("2026-06-01T00:00:00Z"))")),
            M.payload("EXPIRED", subtype: "VOLUNTARY", uuid: "\(k)-9", signed: "2026-06-05T00:00:00Z", transaction: second),
        ].map(mint.line)
    }

    /// The answers at every instant of the grid, with the ordering's prefix taken out.
    static func answers(_ c: Connection, _ k: String) throws -> [String] {
        var result: [String] = []
        var instant = Fixture.time("2026-02-25T00:00:00Z")
        while instant < Fixture.time("2026-07-01T00:00:00Z") {
            for s in try Subscription.fetchAll(c, userId: "u-\(k)", at: instant, includeExpired: true) {
                result.append([instant.ledgerText, s.status.rawValue, "\(s.entitled)", "\(s.autoRenewing)",
                               s.expiryTime?.ledgerText ?? "-", s.gracePeriodExpiryTime?.ledgerText ?? "-",
                               String(s.latestPaymentSeq.dropFirst(k.count)), s.productType.rawValue].joined(separator: " "))
            }
            instant += 2 * 86_400
        }
        return result
    }

    @Test func anyArrivalOrderGivesTheAnswersOfTheSignedOrder() async throws {
        let mint = AppleMint()
        var random = SeededRandom(seed: 0x5EED_0F_0D3E5)
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let link = { (k: String) in #"{"type":"accountLink","userId":"u-\#(k)","storeCode":"AS","appAccountToken":"acct-\#(k)"}"# }
                // The signed order, the owner known first.
                let inOrder = try c.ingest([link("a")] + Self.history("a", mint), stores: mint.stores)
                #expect(inOrder.allSatisfy { $0.status == .recorded }, "\(inOrder)")
                let expected = try Self.answers(c, "a")
                #expect(expected.contains { $0.contains("inGracePeriod") } && expected.contains { $0.contains("billingRetry") })
                #expect(expected.contains { $0.contains("revoked") } && expected.contains { $0.contains(" false ") })
                for round in 0..<24 {
                    let k = "p\(round)x"
                    // Shuffled, some delivered twice, and the account link anywhere among them.
                    var lines = Self.history(k, mint)
                    lines += (0..<2).map { _ in lines[Int(random.next() % UInt64(lines.count))] }
                    lines.append(link(k))
                    lines.shuffle(using: &random)
                    let outcomes = try c.ingest(lines, batchSize: 1 + Int(random.next() % 5), stores: mint.stores)
                    #expect(!outcomes.contains { $0.status == .rejected }, "round \(round): \(outcomes)")
                    #expect(try c.count("SELECT count(*) FROM ledger.notifications WHERE parked") == 0)
                    #expect(try Self.answers(c, k) == expected, "round \(round): order \(lines.map { $0.count })")
                }
                #expect(try ProjectionVerifier(connection: c).verify().isEqual, "a rebuild replays what the appends made")
            }
        }
    }
}

/// SplitMix64, for shuffles a failure can repeat.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
