import LedgerDemo
import Foundation
import LedgerTestSupport
import Postgres
import LedgerOutput
import PurchaseLedger
import LedgerJSON

/// Data and fingerprints for the rebuild, verify and catch-up tests.
enum RebuildFixtures {
    /// Ingests the demo traffic of `users` users through the library's `Ingestor`, as `ledger
    /// ingest` does. Returns the number of events in the log.
    @discardableResult
    static func ingestDemo(_ c: Connection, users: Int, seed: UInt64 = 42) throws -> Int {
        _ = try c.ingest(Array(DemoGenerator(seed: seed, users: users)))
        return try c.count("SELECT count(*) FROM ledger.events")
    }

    /// Appends `count` consumable purchases (and a consume for every third) straight to the log
    /// with `ledger.append`, then projects them with the live `ledger.project_range`: a large
    /// log in seconds, the same projections as if each had been ingested. 500 purchases per
    /// transaction: each new stream takes an advisory lock until the transaction ends.
    static func appendPurchases(_ c: Connection, count: Int, prefix: String = "B") throws {
        for first in stride(from: 1, through: count, by: 500) {
            let last = min(count, first + 499)
            try c.transaction { tx in
                let from = try tx.query("""
                    SELECT min(p) AS p FROM (
                        SELECT ledger.append('payment:' || \(prefix)::text || i, 'PurchaseRecorded',
                               jsonb_build_object('userId', 'bulk-' || (i % 997), 'storeCode', CASE WHEN i % 2 = 0 THEN 'AS' ELSE 'GG' END,
                                                  'productId', 'gem_100', 'productType', 'CONSUMABLE', 'price', '0.99',
                                                  'currency', 'USD', 'paymentSeq', \(prefix)::text || i, 'transactionId', 'T' || \(prefix)::text || i,
                                                  'originalTransactionId', null,
                                                  'purchaseTime', to_char(timestamptz '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                                                  'expiryTime', null, 'payload', 'p' || i, 'sandboxPayment', false,
                                                  'promotionPayment', false, 'productSeq', null,
                                                  'purchaseTokenSha256', encode(sha256(convert_to('tok' || i, 'UTF8')), 'hex')),
                               timestamptz '2026-01-01' + i * interval '1 second') AS p
                          FROM generate_series(\(first)::int, \(last)::int) AS i) appended
                    """)[0].decode("p", as: Int64.self)
                try tx.execute("""
                    SELECT ledger.append('payment:' || \(prefix)::text || i, 'PaymentConsumed',
                           jsonb_build_object('paymentSeq', \(prefix)::text || i, 'userId', 'bulk-' || (i % 997)),
                           timestamptz '2026-01-01' + i * interval '1 second' + interval '1 minute')
                      FROM generate_series(\(first)::int, \(last)::int) AS i WHERE i % 3 = 0
                    """)
                try tx.execute("SELECT ledger.project_range(\(from), (SELECT max(position) FROM ledger.events))")
            }
        }
    }

    /// A fingerprint of every row of every projection table.
    static func projectionDigest(_ c: Connection) throws -> String {
        try c.query("""
            SELECT concat_ws('|',
              (SELECT md5(string_agg(p::text, ',' ORDER BY payment_seq)) FROM ledger.payments p),
              (SELECT md5(string_agg(l::text, ',' ORDER BY store_code, original_transaction_id)) FROM ledger.lineages l),
              (SELECT md5(string_agg(a::text, ',' ORDER BY position)) FROM ledger.auto_renew_changes a),
              (SELECT md5(string_agg(r::text, ',' ORDER BY position)) FROM ledger.restores r),
              (SELECT count(*) FROM ledger.payments)) AS digest
            """)[0].decode("digest", as: String.self)
    }

    /// The answer of every query of docs/contract.md §3 as text: `unconsumed` and `subscriptions`
    /// (at three instants, active and all) for every user, and every row of every view in the
    /// `analytics` schema that does not read the clock, and of the analytics functions.
    static func queryAnswers(_ c: Connection) throws -> [String] {
        var answers: [String] = []
        let users = try c.query("SELECT DISTINCT user_id FROM ledger.payments ORDER BY 1").map { try $0.decode(0, as: String.self) }
        let instants = ["2026-03-01T00:00:00Z", "2026-08-15T12:00:00Z", "2026-11-15T12:00:00Z"].map(Fixture.time)
        for user in users {
            var w = JSONWriter()
            w.beginArray()
            for payment in try UnconsumedPayment.fetchAll(c, userId: user) { payment.write(into: &w) }
            for payment in try UnconsumedPayment.fetchAll(c, userId: user, stores: [.googlePlay]) { payment.write(into: &w) }
            for at in instants {
                for all in [false, true] {
                    for subscription in try Subscription.fetchAll(c, userId: user, at: at, includeExpired: all) {
                        subscription.write(into: &w)
                    }
                }
            }
            w.endArray()
            answers.append("\(user): \(w.string)")
        }
        // The analytics views that do not depend on the clock, and the analytics functions at
        // fixed dates (each only if the schema has it).
        let views = try c.query("""
            SELECT format('%I.%I', n.nspname, v.relname) AS name FROM pg_class v JOIN pg_namespace n ON n.oid = v.relnamespace
             WHERE n.nspname = 'analytics' AND v.relkind = 'v' AND pg_get_viewdef(v.oid) NOT LIKE '%now()%' ORDER BY 1
            """).map { try $0.decode("name", as: String.self) }
        let functions = ["revenue", "subscribers", "churn", "refunds"].map {
            ("analytics.\($0)(date, date, text, boolean)", "analytics.\($0)('2026-01-01', '2026-11-01', 'month', true)")
        } + [("analytics.backlog(timestamptz, boolean)", "analytics.backlog('2026-10-01T00:00:00Z', true)")]
        var sources = views
        for (signature, call) in functions
        where try c.query("SELECT to_regprocedure(\(signature)) IS NOT NULL AS ok")[0].decode("ok", as: Bool.self) {
            sources.append(call)
        }
        for source in sources {
            let rows = try c.query(SQL(unsafeSQL: "SELECT string_agg(v::text, E'\\n' ORDER BY v::text) AS t FROM \(source) v"))
            answers.append("\(source): \(try rows[0].decode("t", as: String?.self) ?? "")")
        }
        return answers
    }

    /// True when no shadow or retired schema is left in the database.
    static func noRebuildSchemasLeft(_ c: Connection) throws -> Bool {
        try c.count("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'ledger\\_%'") == 0
    }
}
