import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import StoreAPIs
import Testing

/// docs/contract.md §6.3, acknowledgement of what SDK lines report: a Google payment recorded from
/// a line brings a job, written in its transaction, that reads the purchase and acknowledges it
/// when Google says pending, once per token whichever channel (line or notification) asks.
@Suite("Google Play: SDK purchase lines read and acknowledged once")
struct AcknowledgementTests {
    static let subscription = Harness.googlePurchase(seq: "P-G1", token: "gtok-1", order: "GPA.1234-5678-9012-34567",
                                                     at: "2026-02-01T00:00:00Z", expiry: "2026-03-01T00:00:00Z")
    static func consumable(_ seq: String, token: String, order: String, price: String = "0.99") -> String {
        Harness.googlePurchase(seq: seq, product: "gem_100", type: "CONSUMABLE", token: token, order: order,
                               at: "2026-02-05T00:00:00Z", price: price)
    }

    static var state: [String: Any] { Harness.googleState(
        subscriptions: ["gtok-1": Harness.subscriptionV2(order: "GPA.1234-5678-9012-34567..0", expiry: "2026-04-01T00:00:00Z",
                                                         acknowledged: false)],
        products: ["gtok-2": Harness.productV2(order: "GPA.2222-3333-4444-55555", acknowledged: false),
                   "gtok-3": Harness.productV2(order: "GPA.3333-3333-4444-55555", acknowledged: true)]) }

    @Test func pendingPurchasesFromLinesAreAcknowledgedOnceAndTheReadRecordsNothingElse() async throws {
        try await Harness.with(Self.state) { h in
            let lines = [
                Self.subscription,
                Self.consumable("P-G2", token: "gtok-2", order: "GPA.2222-3333-4444-55555"),
                Self.consumable("P-G3", token: "gtok-3", order: "GPA.3333-3333-4444-55555"),
                // The same report again, and one the rules refuse: neither brings a job.
                Self.subscription,
                Self.consumable("P-G2", token: "gtok-2", order: "GPA.2222-3333-4444-55555", price: "1.99"),
            ]
            #expect(try h.ingest(lines).map(\.status) == [.recorded, .recorded, .recorded, .duplicate, .rejected])
            let jobs = try await h.ledger.jobs(state: .pending)
            #expect(jobs.map(\.kind).sorted() == ["google.check", "google.check", "google.check"])
            #expect(try h.count("SELECT count(DISTINCT args->>'paymentSeq') FROM ledger.jobs WHERE args->>'paymentSeq' IN ('P-G1', 'P-G2', 'P-G3')") == 3)
            // Each job was caused by its payment's event; the token is in the job only.
            #expect(try h.count("""
                SELECT count(*) FROM ledger.jobs j JOIN ledger.events e ON e.position = j.caused_by
                 WHERE e.stream = 'payment:' || (j.args->>'paymentSeq') AND e.type = 'PurchaseRecorded'
                """) == 3)
            #expect(try h.count("SELECT count(*) FROM ledger.events WHERE data::text LIKE '%gtok-%'") == 0)

            let runs = try await h.runner().runUntilIdle(timeout: .seconds(30))
            #expect(runs.filter { $0.kind == "google.check" }.map(\.result) == [.done, .done, .done], "\(runs)")
            #expect(runs.filter { $0.kind == "google.acknowledge" }.map(\.result) == [.done, .done], "\(runs)")
            #expect(try h.calls("POST", "purchases/subscriptions/vip_month/tokens/gtok-1:acknowledge").count == 1)
            #expect(try h.calls("POST", "purchases/products/gem_100/tokens/gtok-2:acknowledge").count == 1)
            #expect(try h.calls("POST", "gtok-3:acknowledge").isEmpty)
            // The subscription was read from subscriptionsv2, the consumables from productsv2.
            #expect(try h.calls("GET", "subscriptionsv2/tokens/gtok-1").count == 1)
            #expect(try h.calls("GET", "productsv2/tokens/gtok-2").count == 1)
            // The reads recorded nothing: three payments, as the lines said.
            #expect(try h.count("SELECT count(*) FROM ledger.payments") == 3)
            #expect(try h.count("SELECT count(*) FROM ledger.jobs WHERE secret IS NOT NULL") == 0)

            // Google's renewal notification about the same token reads it again (still pending in
            // the answer): the payment is learned, the acknowledgement is not sent twice.
            let renewed = Harness.googleSubscriptionPush(type: 2, token: "gtok-1", messageId: "m-1", eventTime: "2026-03-01T00:00:05Z")
            #expect(try h.ingest([renewed]).map(\.status) == [.recorded])
            let later = try await h.runner().runUntilIdle(timeout: .seconds(30))
            #expect(later.map(\.kind) == ["google.subscription"], "\(later)")
            #expect(later.map(\.outcome) == ["recorded"])
            #expect(try h.calls("POST", ":acknowledge").count == 2)
        }
    }

    /// A notification and a line about the same token in one batch, the notification first:
    /// two reads, one acknowledgement; the line again later is a duplicate and asks nothing.
    @Test func aNotificationAndALineAboutOneTokenAcknowledgeItOnce() async throws {
        try await Harness.with(Self.state) { h in
            let pushed = Harness.googleSubscriptionPush(type: 4, token: "gtok-1", messageId: "m-4", eventTime: "2026-02-01T00:00:00Z")
            #expect(try h.ingest([pushed, Self.subscription]).map(\.status) == [.recorded, .recorded])
            let runs = try await h.runner().runUntilIdle(timeout: .seconds(30))
            #expect(runs.map(\.kind).sorted() == ["google.acknowledge", "google.check", "google.subscription"], "\(runs)")
            #expect(try h.calls("POST", "tokens/gtok-1:acknowledge").count == 1)
            #expect(try h.ingest([Self.subscription]).map(\.status) == [.duplicate])
            #expect(try await h.runner().runUntilIdle(timeout: .seconds(30)).isEmpty)
            #expect(try h.calls("POST", "tokens/gtok-1:acknowledge").count == 1)
        }
    }

    /// Google's answer about a purchase whose owner is unknown says it is not acknowledged: the
    /// acknowledgement waits (acknowledging a purchase nobody owns would stop Google's refund of
    /// goods nobody received) until a line names the owner and the payment is recorded.
    @Test func theAcknowledgementOfAParkedPurchaseWaitsForItsOwner() async throws {
        let state = Harness.googleState(subscriptions: ["gtok-9": Harness.subscriptionV2(
            order: "GPA.9999-0000-1111-22222", expiry: "2026-04-01T00:00:00Z", acknowledged: false, account: "acct-7")])
        try await Harness.with(state) { h in
            let push = Harness.googleSubscriptionPush(type: 4, token: "gtok-9", messageId: "m-9", eventTime: "2026-03-01T00:00:00Z")
            #expect(try h.ingest([push]).map(\.status) == [.recorded])
            let runs = try await h.runner().runUntilIdle(timeout: .seconds(30))
            #expect(runs.map(\.outcome) == ["parked"], "\(runs)")
            let waiting = try await h.ledger.jobs(state: .waiting)
            #expect(waiting.map(\.kind) == ["google.acknowledge"])
            #expect(try h.calls("POST", ":acknowledge").isEmpty)
            // A waiting job is not due: a runner has nothing to do.
            #expect(try await h.runner().runDue().isEmpty)

            let link = #"{"type":"accountLink","userId":"u7","storeCode":"GG","obfuscatedAccountId":"acct-7"}"#
            #expect(try h.ingest([link]).map(\.status) == [.recorded])
            #expect(try await h.ledger.jobs(state: .waiting).isEmpty)
            let after = try await h.runner().runUntilIdle(timeout: .seconds(30))
            #expect(after.map(\.kind) == ["google.acknowledge"], "\(after)")
            #expect(after.map(\.result) == [.done])
            #expect(try h.calls("POST", "purchases/subscriptions/vip_month/tokens/gtok-9:acknowledge").count == 1)
            #expect(try h.count("SELECT count(*) FROM ledger.jobs WHERE secret IS NOT NULL") == 0)
        }
    }

    /// The library's own `record`, not only `ingest`, writes the job.
    @Test func theLibrarysRecordWritesTheJobToo() async throws {
        try await Harness.with(Self.state) { h in
            let payment = Payment(userId: "u1", storeCode: .googlePlay, productId: "gem_100", productType: .consumable,
                                  price: "0.99", currency: "USD", paymentSeq: "P-L2", purchaseToken: "gtok-2",
                                  transactionId: "GPA.2222-3333-4444-55555", purchaseTime: Fixture.time("2026-02-05T00:00:00Z"))
            #expect(try await h.ledger.record(payment) == .recorded)
            #expect(try await h.ledger.record(payment) == .duplicate)
            #expect(try h.count("SELECT count(*) FROM ledger.jobs WHERE kind = 'google.check' AND args->>'paymentSeq' = 'P-L2'") == 1)
            _ = try await h.runner().runUntilIdle(timeout: .seconds(30))
            #expect(try h.calls("POST", "purchases/products/gem_100/tokens/gtok-2:acknowledge").count == 1)
        }
    }

    /// A line does not say which app sold it: with several packages configured the read asks each
    /// in name order, and a package that does not know the token (404) passes to the next.
    @Test func withSeveralPackagesTheReadAsksEachUntilOneKnowsTheToken() async throws {
        try await Harness.with(Self.state, environment: ["LEDGER_GOOGLE_PACKAGE_NAMES": "com.aaa.first,\(Harness.package)"]) { h in
            _ = try h.ingest([Self.consumable("P-G2", token: "gtok-2", order: "GPA.2222-3333-4444-55555")])
            let runs = try await h.runner().runUntilIdle(timeout: .seconds(30))
            #expect(runs.map(\.result) == [.done, .done], "\(runs)")
            let reads = try h.calls("GET", "productsv2/tokens/gtok-2")
            #expect(reads.map(\.status) == [404, 200])
            #expect(reads.first?.path.contains("/applications/com.aaa.first/") == true)
            let acks = try h.calls("POST", ":acknowledge")
            #expect(acks.count == 1)
            #expect(acks.first?.path.contains("/applications/\(Harness.package)/") == true)
        }
    }

    /// Without Google's API configured a line is recorded as before: no job.
    @Test func withoutGoogleConfiguredALineBringsNoJob() async throws {
        try await TestDatabase.with { database in
            let stores = StoreConfiguration(googlePackageNames: [Harness.package])
            let outcomes = try database.withConnection { try $0.ingest([Self.subscription], stores: stores) }
            #expect(outcomes.map(\.status) == [.recorded])
            #expect(try database.withConnection { try $0.count("SELECT count(*) FROM ledger.jobs") } == 0)
        }
    }
}
