import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import StoreAPIs
import Testing

/// docs/contract.md §6.4 over loopback HTTP: consumption answers from the ledger's own facts within
/// Apple's 12 hours, and Notification History reconciled.
@Suite("App Store: consumption answers and notification history")
struct AppleJobTests {
    typealias M = AppleMint

    static func consumptionRequest(_ mint: AppleMint, transaction: String, uuid: String, signed: Date,
                                   type: String = "Consumable", product: String = "gem_100") -> String {
        let t = Self.transaction(transaction, type: type)
        let payload = M.payload("CONSUMPTION_REQUEST", uuid: uuid, signed: ISO8601DateFormatter().string(from: signed), transaction: t)
        return mint.line(payload)
    }

    static func purchase(seq: String, transaction: String, type: String = "CONSUMABLE", product: String = "gem_100") -> String {
        var fields: [String: String?] = ["userId": "\"u2\"", "paymentSeq": "\"\(seq)\"", "transactionId": "\"\(transaction)\"",
                                         "purchaseToken": "\"atok-\(seq)\"", "purchaseTime": "\"2026-02-10T00:00:00Z\"",
                                         "productType": "\"\(type)\"", "productId": "\"\(product)\""]
        if type != "CONSUMABLE" { fields["expiryTime"] = "\"2026-03-10T00:00:00Z\"" }
        return Fixture.purchaseLine(fields)
    }

    static func transaction(_ id: String, type: String) -> String {
        M.transaction(id, original: id, product: "gem_100", purchase: "2026-02-10T00:00:00Z",
                      expires: type == "Consumable" ? nil : "2026-03-10T00:00:00Z", type: type, account: nil, price: 990)
    }

    /// The fake answers Send Consumption Information only for a transaction it holds (404
    /// otherwise), signed as Apple would.
    static func state(_ mint: AppleMint, _ transactions: [(String, String)]) -> [String: Any] {
        var signed: [String: Any] = [:]
        for (id, type) in transactions { signed[id] = mint.chain.sign(transaction(id, type: type)) }
        return ["apple": ["bundleId": AppleMint.bundle, "historyPageSize": 2, "historyMaxAgeDays": NSNull(), "transactions": signed]]
    }

    /// (consumed?, product type) → deliveryStatus, consumptionPercentage, refundPreference (auto).
    @Test(arguments: [
        (true, "CONSUMABLE", "DELIVERED", 100_000 as Int?, "DECLINE"),
        (false, "CONSUMABLE", "UNDELIVERED_OTHER", 0, "GRANT_FULL"),
        (false, "AUTO_RENEWABLE", "DELIVERED", nil, "DECLINE"),
        (false, "CONSUMABLE_AUTO_RENEWABLE", "UNDELIVERED_OTHER", nil, "GRANT_FULL"),
        (true, "CONSUMABLE_AUTO_RENEWABLE", "DELIVERED", nil, "DECLINE"),
    ] as [(Bool, String, String, Int?, String)])
    func aConsumptionRequestIsAnsweredFromTheLedgersFacts(consumed: Bool, type: String, delivery: String,
                                                         percentage: Int?, preference: String) async throws {
        let mint = AppleMint()
        let storeType = type == "CONSUMABLE" ? "Consumable" : "Auto-Renewable Subscription"
        try await Harness.with(Self.state(mint, [("2000000500", storeType)]), consumptionAnswers: true, chain: mint.chain) { h in
            var lines = [Self.purchase(seq: "P-A1", transaction: "2000000500", type: type)]
            if consumed {
                lines.append(#"{"type":"consume","userId":"u2","paymentSeq":"P-A1","purchaseToken":"atok-P-A1","time":"2026-02-10T00:01:00Z"}"#)
            }
            lines.append(Self.consumptionRequest(mint, transaction: "2000000500", uuid: "c-1", signed: Date(),
                                                 type: storeType))
            let outcomes = try h.ingest(lines)
            #expect(outcomes.last?.status == .recorded)
            let runs = try await h.runner().runUntilIdle(timeout: .seconds(30))
            #expect(runs.map(\.result) == [.done], "\(runs)")
            let puts = try h.calls("PUT", "/inApps/v2/transactions/consumption/2000000500")
            #expect(puts.count == 1)
            let body = try #require(puts.first?.body)
            #expect(body["customerConsented"] as? Bool == true)
            #expect(body["deliveryStatus"] as? String == delivery)
            #expect(body["consumptionPercentage"] as? Int == percentage)
            #expect(body["sampleContentProvided"] as? Bool == false)
            #expect(body["refundPreference"] as? String == preference)
            #expect(puts.first?.status == 202)
        }
    }

    @Test func aRefundPreferenceOfNoneIsLeftOutAndAFixedOneAlwaysSent() async throws {
        for (setting, expected) in [("none", nil), ("GRANT_PRORATED", "GRANT_PRORATED")] as [(String, String?)] {
            let mint = AppleMint()
            try await Harness.with(Self.state(mint, [("2000000500", "Consumable")]), consumptionAnswers: true,
                                   environment: ["LEDGER_APPLE_REFUND_PREFERENCE": setting, "LEDGER_APPLE_SAMPLE_CONTENT_PROVIDED": "true"],
                                   chain: mint.chain) { h in
                _ = try h.ingest([Self.purchase(seq: "P-A1", transaction: "2000000500"),
                                  Self.consumptionRequest(mint, transaction: "2000000500", uuid: "c-1", signed: Date())])
                _ = try await h.runner().runUntilIdle(timeout: .seconds(30))
                let body = try #require(try h.calls("PUT", "/consumption/2000000500").first?.body)
                #expect(body["refundPreference"] as? String == expected)
                #expect(body["sampleContentProvided"] as? Bool == true)
            }
        }
    }

    @Test func aRequestAboutAnUnknownTransactionIsParkedAndAnsweredOnceTheTransactionIsKnown() async throws {
        let mint = AppleMint()
        try await Harness.with(Self.state(mint, [("2000000700", "Consumable")]), consumptionAnswers: true, chain: mint.chain) { h in
            #expect(try h.ingest([Self.consumptionRequest(mint, transaction: "2000000700", uuid: "c-7", signed: Date())]).map(\.status) == [.parked])
            #expect(try await h.runner().runUntilIdle(timeout: .seconds(5)).isEmpty)
            #expect(try h.ingest([Self.purchase(seq: "P-A7", transaction: "2000000700")]).map(\.status) == [.recorded])
            let runs = try await h.runner().runUntilIdle(timeout: .seconds(30))
            #expect(runs.map(\.result) == [.done], "\(runs)")
            #expect(try h.calls("PUT", "/consumption/2000000700").first?.body?["deliveryStatus"] as? String == "UNDELIVERED_OTHER")
        }
    }

    @Test func aRequestOlderThanTwelveHoursIsNeverAnswered() async throws {
        let mint = AppleMint()
        try await Harness.with(Self.state(mint, [("2000000500", "Consumable")]), consumptionAnswers: true, chain: mint.chain) { h in
            let old = Date().addingTimeInterval(-12 * 3600 - 60)
            _ = try h.ingest([Self.purchase(seq: "P-A1", transaction: "2000000500"),
                              Self.consumptionRequest(mint, transaction: "2000000500", uuid: "c-1", signed: old)])
            let runs = try await h.runner().runUntilIdle(timeout: .seconds(30))
            #expect(runs.map(\.result) == [.failed], "\(runs)")
            #expect(runs.first?.error?.contains("12-hour window") == true)
            #expect(try h.calls("PUT", "/consumption/2000000500").isEmpty)
            #expect(try await h.ledger.jobs(state: .failed).first?.lastError?.contains("12-hour window") == true)
        }
    }

    @Test func withoutConsumptionAnswersARequestIsOnlyKept() async throws {
        let mint = AppleMint()
        try await Harness.with(Self.state(mint, [("2000000500", "Consumable")]), consumptionAnswers: false, chain: mint.chain) { h in
            let outcomes = try h.ingest([Self.purchase(seq: "P-A1", transaction: "2000000500"),
                                         Self.consumptionRequest(mint, transaction: "2000000500", uuid: "c-1", signed: Date())])
            #expect(outcomes.map(\.status) == [.recorded, .ignored])
            #expect(try h.count("SELECT count(*) FROM ledger.jobs") == 0)
        }
    }

    /// Notification History, every page (two a page here), each payload applied as delivered.
    @Test func notificationHistoryIsReconciledPageByPageAndWhatWasReceivedIsADuplicate() async throws {
        let mint = AppleMint()
        let first = M.transaction("600", original: "600", purchase: "2026-03-01T00:00:00Z", expires: "2026-04-01T00:00:00Z")
        var payloads: [String] = []
        for n in 0..<5 {
            let t = M.transaction("\(600 + n)", original: "600", purchase: "2026-0\(3 + n / 2)-01T00:00:0\(n)Z",
                                  expires: "2026-0\(4 + n / 2)-01T00:00:0\(n)Z")
            payloads.append(M.payload(n == 0 ? "SUBSCRIBED" : "DID_RENEW", uuid: "h-\(n)", signed: "2026-03-01T00:00:0\(n)Z",
                                      transaction: n == 0 ? first : t))
        }
        let history = payloads.map { mint.chain.signNested($0) }
        let state: [String: Any] = ["apple": ["bundleId": AppleMint.bundle, "historyPageSize": 2, "historyMaxAgeDays": NSNull(),
                                              "notificationHistory": history]]
        try await Harness.with(state, chain: mint.chain) { h in
            _ = try h.ingest([#"{"type":"accountLink","userId":"ua","storeCode":"AS","appAccountToken":"acct-1"}"#,
                              "{\"type\":\"appleNotification\",\"signedPayload\":\"\(history[0])\"}"])
            let reconciler = Reconciler(ledger: h.ledger, stores: h.api, http: h.http)
            let outcomes = try await reconciler.apple(since: Fixture.time("2026-01-01T00:00:00Z"))
            #expect(outcomes.map(\.status) == [.duplicate, .recorded, .recorded, .recorded, .recorded])
            #expect(try h.calls("POST", "/inApps/v1/notifications/history").count == 3)
            let again = try await reconciler.apple(since: Fixture.time("2026-01-01T00:00:00Z"))
            #expect(again.allSatisfy { $0.status == .duplicate })
            #expect(try h.count("SELECT count(*) FROM ledger.payments") == 5)
        }
    }
}
