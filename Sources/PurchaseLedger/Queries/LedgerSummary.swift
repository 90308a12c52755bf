import Foundation
import Postgres

/// A one-screen picture of the whole ledger.
public struct LedgerSummary: Sendable {
    /// Events in the log, by type.
    public var eventsByType: [(type: String, count: Int)]
    /// Users with at least one payment.
    public var users: Int
    /// Payments by store.
    public var paymentsByStore: [(store: String, count: Int)]
    /// Gross, refunded and net revenue by currency (non-sandbox payments).
    public var revenue: [(currency: String, gross: String, refunds: String, net: String)]
    /// Payments whose goods were not handed out yet, and the oldest of them.
    public var unconsumed: Int
    public var oldestUnconsumed: Date?
    /// Subscription lineages by status at the instant asked.
    public var subscriptionsByStatus: [(status: String, count: Int)]
}

extension LedgerSummary {
    /// Counts for a summary, with subscriptions evaluated at `at`.
    package static func fetch(_ connection: Connection, at: Date) throws -> LedgerSummary {
        let events = try connection.query("SELECT type, count(*)::bigint AS n FROM ledger.events GROUP BY type ORDER BY type")
        let users = try connection.query("SELECT count(DISTINCT user_id)::bigint AS n FROM ledger.payments")
        let stores = try connection.query("SELECT store_code, count(*)::bigint AS n FROM ledger.payments GROUP BY store_code ORDER BY store_code")
        let revenue = try connection.query("""
            SELECT currency, sum(price) AS gross,
                   coalesce(sum(price) FILTER (WHERE refunded_at IS NOT NULL), 0) AS refunds,
                   sum(price) - coalesce(sum(price) FILTER (WHERE refunded_at IS NOT NULL), 0) AS net
              FROM ledger.payments WHERE NOT sandbox_payment GROUP BY currency ORDER BY currency
            """)
        let backlog = try connection.query("""
            SELECT count(*)::bigint AS n, min(purchase_time) AS oldest FROM ledger.payments
             WHERE consumed_at IS NULL AND refunded_at IS NULL AND product_type <> 'AUTO_RENEWABLE'
            """)
        let subscriptions = try connection.query("""
            SELECT status, count(*)::bigint AS n FROM ledger.subscriptions_at(\(at)::timestamptz)
             GROUP BY status ORDER BY status
            """)
        return LedgerSummary(
            eventsByType: try events.map { (try $0.decode("type"), try $0.decode("n")) },
            users: try users[0].decode("n"),
            paymentsByStore: try stores.map { (try $0.decode("store_code"), try $0.decode("n")) },
            revenue: try revenue.map {
                (try $0.decode("currency"), try $0.decode("gross", as: PostgresNumeric.self).text,
                 try $0.decode("refunds", as: PostgresNumeric.self).text, try $0.decode("net", as: PostgresNumeric.self).text)
            },
            unconsumed: try backlog[0].decode("n"),
            oldestUnconsumed: try backlog[0].decode("oldest"),
            subscriptionsByStatus: try subscriptions.map { (try $0.decode("status"), try $0.decode("n")) })
    }
}
