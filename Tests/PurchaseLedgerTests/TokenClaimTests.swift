import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// A Google purchase token belongs to the first payment recorded with it (`ledger.token_keys`);
/// a later payment with the same token, another user's or a renewal's, is recorded and says in its
/// event that the token was another payment's already (`purchaseTokenClaimed: false`, written by
/// `ledger.payment_token_claim`), one at a time and in a set alike. A replay follows the mark, so
/// it gives the token to the same payment whichever it meets first: on a Citus cluster the second
/// payment can hold the lower position (`CommandsOnWorkers.aTokenStaysWithItsFirstPaymentWhen…`).
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

    /// Each payment event's paymentSeq and its mark ("-" when it has none), by paymentSeq (a set
    /// appends in rounds: a token's second payment after the round of its first).
    static func marks(_ c: Connection) throws -> [String] {
        try c.query("""
            SELECT data->>'paymentSeq' AS seq, coalesce(data->>'purchaseTokenClaimed', '-') AS mark
              FROM ledger.events WHERE type = 'PurchaseRecorded' ORDER BY 1
            """).map { "\(try $0.decode("seq", as: String.self)) \(try $0.decode("mark", as: String.self))" }
    }

    @Test(arguments: [false, true])
    func aLaterPaymentWithATokenSaysTheTokenWasAnothersAlready(batched: Bool) async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let outcomes = batched ? try c.executeBatch(Self.commands) : try Self.commands.map { try c.run($0) }
                #expect(outcomes.map(\.status) == Array(repeating: .recorded, count: 5), "\(outcomes)")
                #expect(try Self.marks(c) == ["A-1 -", "G-1 -", "G-2 false", "G-3 -", "G-4 false"])
                #expect(try c.query("""
                    SELECT p.payment_seq FROM ledger.token_keys k
                      JOIN ledger.payments p ON p.user_id = k.user_id AND p.recorded_position = k.position
                     ORDER BY p.payment_seq
                    """).map { try $0.decode("payment_seq", as: String.self) } == ["G-1", "G-3"])
                #expect(try c.keyRegistryAgreement()["token_keys"]?.disagreeing == 0)
                let report = try ProjectionVerifier(connection: c).verify()
                #expect(report.isEqual, "\(report.differences)")
            }
        }
    }
}
