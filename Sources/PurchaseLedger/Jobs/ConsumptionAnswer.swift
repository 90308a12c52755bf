import Foundation
import Postgres
import StoreAPIs

/// The answer to Apple's CONSUMPTION_REQUEST (docs/contract.md §6.4), from the ledger's own facts
/// when the job runs: whether the payment's goods were handed out (consumed), and for a
/// subscription whether it was delivered. Never sent later than 12 hours after the request.
enum ConsumptionAnswer {
    /// Apple's window for an answer, from the request's `signedDate`.
    static let window: TimeInterval = 12 * 3600

    static func send(job: ClaimedJob, ledger: Ledger, stores: StoreAPIConfiguration, apple: AppStoreServerClient,
                     now: Date = Date()) async throws {
        guard let transaction = job.args["transactionId"], !transaction.isEmpty else {
            throw JobRunner.PermanentFailure(description: "the consumption request names no transaction")
        }
        guard let signed = job.args["signedDate"].flatMap({ Timestamp.parseISO8601($0)?.date }) else {
            throw JobRunner.PermanentFailure(description: "the consumption request has no signedDate")
        }
        let closes = signed.addingTimeInterval(window)
        guard now <= closes else {
            throw JobRunner.PermanentFailure(description:
                "Apple's 12-hour window for answering the consumption request closed at \(Timestamp(closes).iso8601Microseconds)")
        }
        let facts = try await ledger.pool.withConnection { connection in
            try connection.query("""
                SELECT product_type, consumed_at IS NOT NULL AS consumed
                  FROM ledger.payments WHERE store_code = 'AS' AND transaction_id = \(transaction)
                """).first.map { (type: try $0.decode("product_type", as: String.self), consumed: try $0.decode("consumed", as: Bool.self)) }
        }
        guard let facts else {
            throw JobRunner.PermanentFailure(description: "the ledger holds no App Store transaction \(transaction)")
        }
        let body = request(productType: facts.type, consumed: facts.consumed, stores: stores)
        let environment: AppStoreEnvironment = job.args["environment"] == "Sandbox" ? .sandbox : .production
        try await apple.sendConsumptionInformation(transactionId: transaction, body: body, environment: environment)
    }

    /// §6.4's table: a consumable is delivered when consumed (100 %), else not (0 %); a
    /// subscription's payment is delivered (no percentage), except a consumable subscription's
    /// payment not yet consumed.
    static func request(productType: String, consumed: Bool, stores: StoreAPIConfiguration) -> ConsumptionRequest {
        let delivered: Bool
        let percentage: Int?
        switch productType {
        case ProductType.consumable.rawValue:
            delivered = consumed
            percentage = consumed ? 100_000 : 0
        case ProductType.consumableAutoRenewable.rawValue:
            delivered = consumed
            percentage = nil
        default:
            delivered = true
            percentage = nil
        }
        let preference: ConsumptionRequest.RefundPreference? = switch stores.appleRefundPreference {
        case .auto: delivered ? .decline : .grantFull
        case .none: nil
        case .fixed(let fixed): fixed
        }
        return ConsumptionRequest(customerConsented: true, deliveryStatus: delivered ? .delivered : .undeliveredOther,
                                  consumptionPercentage: percentage, sampleContentProvided: stores.appleSampleContentProvided,
                                  refundPreference: preference)
    }
}
