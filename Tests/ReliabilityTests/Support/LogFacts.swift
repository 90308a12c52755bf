import Foundation
import Postgres

/// What the event log says about payments, read with plain SQL for the tests' checks.
struct LogFacts {
    /// paymentSeq → how many PurchaseRecorded / RenewalRecorded events it has.
    var records: [String: Int] = [:]
    /// paymentSeq → how many PaymentConsumed events.
    var consumes: [String: Int] = [:]
    /// paymentSeq → how many PaymentRefunded events.
    var refunds: [String: Int] = [:]
    /// Payments with a PaymentConsumed event after a PaymentRefunded one in their stream.
    var consumedAfterRefund: [String] = []
    var events = 0

    init(_ connection: Connection) throws {
        events = try connection.query("SELECT count(*)::bigint AS n FROM ledger.events")[0].decode("n")
        for row in try connection.query("""
            SELECT data->>'paymentSeq' AS seq, type, count(*)::bigint AS n FROM ledger.events
             WHERE type IN ('PurchaseRecorded', 'RenewalRecorded', 'PaymentConsumed', 'PaymentRefunded')
             GROUP BY 1, 2
            """) {
            let seq = try row.decode("seq", as: String.self), n = try row.decode("n", as: Int.self)
            switch try row.decode("type", as: String.self) {
            case "PaymentConsumed": consumes[seq, default: 0] += n
            case "PaymentRefunded": refunds[seq, default: 0] += n
            default: records[seq, default: 0] += n
            }
        }
        consumedAfterRefund = try connection.query("""
            SELECT c.data->>'paymentSeq' AS seq FROM ledger.events c JOIN ledger.events r
                ON r.stream = c.stream AND r.type = 'PaymentRefunded' AND r.version < c.version
             WHERE c.type = 'PaymentConsumed'
            """).map { try $0.decode("seq", as: String.self) }
    }

    /// Payments recorded more than once, consumed or refunded more than once.
    var doubled: [String] {
        (records.filter { $0.value > 1 }.map { "recorded twice: \($0.key)" }
            + consumes.filter { $0.value > 1 }.map { "consumed twice: \($0.key)" }
            + refunds.filter { $0.value > 1 }.map { "refunded twice: \($0.key)" }).sorted()
    }
}
