import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// A Google purchase token belongs to the first payment recorded with it (`ledger.token_keys`);
/// a later payment with the same token, another user's or the owner's own second one, is recorded
/// and leaves the token where it is, one at a time and in a set alike, live and in a replay. On a
/// Citus cluster the later payment's event says so (`purchaseTokenClaimed: false`, from
/// `ledger.payment_token_claim`), since there it can hold the lower position
/// (`CommandsOnWorkers.aTokenStaysWithItsFirstPaymentWhenTheSecondHoldsTheLowerPosition`); on one
/// server the order of positions says the same, and no event carries the mark.
@Suite("Purchase tokens claimed once")
struct TokenClaimTests {
    static func google(_ user: String, _ seq: String, token: String) -> Payment {
        var payment = Fixture.consumable(seq, user: user, store: .googlePlay)
        payment.purchaseToken = token
        return payment
    }

    static let commands: [LedgerCommand] = [
        .record(google("u-1", "G-1", token: "shared"), kind: .purchase),
        .record(google("u-2", "G-2", token: "shared"), kind: .purchase),   // another user's
        .record(google("u-1", "G-3", token: "own"), kind: .purchase),
        .record(google("u-1", "G-4", token: "shared"), kind: .purchase),   // the owner's own second
        .record(Fixture.consumable("A-1", user: "u-2"), kind: .purchase),  // App Store: no claim
    ]

    @Test(arguments: [false, true])
    func aLaterPaymentWithATokenLeavesItWithTheFirst(batched: Bool) async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let outcomes = batched ? try c.executeBatch(Self.commands) : try Self.commands.map { try c.run($0) }
                #expect(outcomes.map(\.status) == Array(repeating: .recorded, count: 5), "\(outcomes)")
                #expect(try c.query("""
                    SELECT p.payment_seq FROM ledger.token_keys k
                      JOIN ledger.payments p ON p.user_id = k.user_id AND p.recorded_position = k.position
                     ORDER BY p.payment_seq
                    """).map { try $0.decode("payment_seq", as: String.self) } == ["G-1", "G-3"])
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE data ? 'purchaseTokenClaimed'") == 0,
                        "one server writes no mark")
                #expect(try c.keyRegistryAgreement()["token_keys"]?.disagreeing == 0)
                let report = try ProjectionVerifier(connection: c).verify()
                #expect(report.isEqual, "\(report.differences)")
            }
        }
    }

    /// The mark's one definition, which a cluster's payments run: a Google payment's data gains
    /// `"purchaseTokenClaimed": false` when the registry holds its token, and nothing otherwise;
    /// another store's payment, a token nobody holds, and an event of another type are unchanged.
    @Test func theMarkSaysWhetherTheRegistryHoldsTheTokenAlready() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                #expect(try c.run(.record(Self.google("u-1", "G-1", token: "shared"), kind: .purchase)).status == .recorded)
                let held = try c.query("SELECT encode(token_sha256, 'hex') AS t FROM ledger.token_keys")[0].decode("t", as: String.self)
                func claim(_ type: String, store: String, token: String) throws -> String {
                    try c.query(SQL(unsafeSQL: """
                        SELECT ledger.payment_token_claim('\(type)',
                               jsonb_build_object('storeCode', '\(store)', 'purchaseTokenSha256', '\(token)'))::text AS d
                        """))[0].decode("d", as: String.self)
                }
                let free = String(repeating: "0", count: 64)
                #expect(try claim("PurchaseRecorded", store: "GG", token: held).contains(#""purchaseTokenClaimed": false"#))
                #expect(try claim("RenewalRecorded", store: "GG", token: held).contains("purchaseTokenClaimed"))
                #expect(try !claim("PurchaseRecorded", store: "GG", token: free).contains("purchaseTokenClaimed"))
                #expect(try !claim("PurchaseRecorded", store: "AS", token: held).contains("purchaseTokenClaimed"))
                #expect(try !claim("PaymentLinked", store: "GG", token: held).contains("purchaseTokenClaimed"))
            }
        }
    }
}
