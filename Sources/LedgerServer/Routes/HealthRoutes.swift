import LedgerJSON
import Hummingbird
import Postgres
import PurchaseLedger

/// `GET /healthz` (the process answers), `GET /readyz` (the database answers and has exactly
/// the migrations this build carries) and `GET /metrics` (Prometheus text). No key needed:
/// they tell nothing about payments or users. `HEAD /healthz` and `HEAD /readyz` answer the
/// status and headers of `GET` without the body, for probes that send HEAD.
struct HealthRoutes {
    let ledger: Ledger
    let metrics: ServerMetrics

    func add(to router: Router<LedgerRequestContext>) {
        router.get("/healthz") { _, _ in Self.healthy }
        router.head("/healthz") { _, _ in Self.healthy.createHeadResponse() }
        router.get("/readyz") { _, _ in try await readiness() }
        router.head("/readyz") { _, _ in try await readiness().createHeadResponse() }
        router.get("/metrics") { _, _ in
            await recordJobs()
            if !ledger.replicas.isEmpty { metrics.recordReads(ledger.replicas.counts.withLock { $0 }) }
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                     body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition(pool: ledger.pool))))
        }
    }

    /// The jobs' gauges from the database; left as they were when it cannot answer (a scrape
    /// must not fail because the database is slow).
    private func recordJobs() async {
        guard let rows = try? await ledger.pool.withConnection({ connection in
            // One round trip: the counts, and beside each the oldest pending job's age.
            try connection.query("""
                SELECT kind, CASE WHEN state = 'pending' AND leased_until > now() THEN 'running' ELSE state END AS state,
                       count(*)::int AS n,
                       extract(epoch FROM now() - min(min(created_at) FILTER (WHERE state = 'pending')) OVER ())::float8 AS oldest
                  FROM ledger.jobs WHERE state IN ('pending', 'failed', 'waiting') GROUP BY 1, 2
                """).map { (ServerMetrics.JobCount(kind: try $0.decode("kind"), state: try $0.decode("state"),
                                                   count: Int(try $0.decode("n", as: Int32.self))),
                            try $0.decode("oldest", as: Double?.self)) }
        }) else { return }
        let (counts, oldest) = (rows.map(\.0), rows.first?.1)
        metrics.recordJobs(counts, oldestPending: oldest)
        // Each endpoint's oldest delivery not yet made, aged from its event's commit.
        if let webhooks = try? await ledger.pool.withConnection({ connection in
            try connection.query("""
                SELECT e.id::text AS endpoint,
                       coalesce(extract(epoch FROM now() - min(coalesce(ev.recorded_at, j.created_at))), 0)::float8 AS oldest
                  FROM ledger.webhook_endpoints e
                  LEFT JOIN ledger.jobs j ON j.queue LIKE 'webhook:' || e.id || ':%' AND j.state IN ('pending', 'waiting')
                  LEFT JOIN ledger.events ev ON ev.position = j.caused_by
                 WHERE e.removed_at IS NULL
                 GROUP BY e.id
                """).map { (endpoint: try $0.decode("endpoint", as: String.self), seconds: try $0.decode("oldest", as: Double.self)) }
        }) {
            metrics.recordWebhooks(webhooks)
        }
    }

    private static var healthy: Response { Response.json(#"{"status":"ok"}"#) }

    /// 200 `ready`, or 503 `notReady` with the reason.
    private func readiness() async throws -> Response {
        do {
            let problem = try await ledger.pool.withConnection { try Self.migrationProblem($0) }
            if let problem { return Self.notReady(problem) }
            return Response.json(#"{"status":"ready"}"#)
        } catch let error as PostgresError {
            return Self.notReady(error.sqlState == .undefinedTable ? "the database is not migrated: run ledger migrate"
                                 : "the database cannot be reached")
        }
    }

    /// Why the schema is not the one this build expects, or nil.
    static func migrationProblem(_ connection: Connection) throws -> String? {
        let applied = try Migrator().appliedChecksums(connection)
        let known = Migration.all
        if let unknown = applied.keys.filter({ version in !known.contains { $0.version == version } }).min() {
            return "the database has migration \(unknown), which this build does not know: use a newer ledger"
        }
        let pending = known.filter { applied[$0.version] == nil }.map(\.name)
        if !pending.isEmpty { return "migrations not applied: \(pending.joined(separator: ", ")): run ledger migrate" }
        if let changed = known.first(where: { applied[$0.version]?.checksum != $0.checksum }) {
            return "migration \(changed.name) differs from the applied one"
        }
        let current = Dictionary(uniqueKeysWithValues: Definition.all.map { ($0.path, $0.checksum) })
        if try Migrator().recordedDefinitions(connection) != current {
            return "the functions and views differ from this build's (Schema/definitions): run ledger migrate"
        }
        return nil
    }

    private static func notReady(_ reason: String) -> Response {
        var w = JSONWriter()
        w.beginObject()
        w.field("status", "notReady")
        w.field("reason", reason)
        w.endObject()
        return .json(w.string, status: .serviceUnavailable)
    }
}
