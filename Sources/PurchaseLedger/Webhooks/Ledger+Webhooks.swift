import Foundation
import Postgres

extension Ledger {
    /// `ledger webhooks add`: a new endpoint that receives what is appended from now on (older
    /// events: `replayWebhook(id:from:)`), and its signing secret, which is returned only here.
    /// A URL that is not http(s) with a host, or a type the ledger does not write, is refused
    /// with the field named.
    public func addWebhook(url: String, eventTypes: [String]? = nil) async throws -> (WebhookEndpoint, secret: String) {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = parts.host, !host.isEmpty else {
            throw LedgerError.invalid("url", "expected an http:// or https:// URL with a host, got '\(url)'")
        }
        if let eventTypes {
            guard !eventTypes.isEmpty else { throw LedgerError.invalid("events", "name at least one type, or leave it out for every type") }
            for type in eventTypes where !WebhookEndpoint.eventTypes.contains(type) {
                throw LedgerError.invalid("events", "unknown type '\(type)': expected one of \(WebhookEndpoint.eventTypes.joined(separator: ", "))")
            }
        }
        let secret = WebhookSignature.newSecret()
        let types = eventTypes.map { PostgresArray(elements: $0.map { .text($0) }) }
        // The log's end, then the endpoint: no transaction around them, since a worker's horizon
        // is asked over Citus's cached connections only outside one (CatchUpReader.horizons(on:)),
        // and a reader starting before an event appended in between delivers it.
        let id: Int64 = try await pool.withConnection { connection in
            let ends = try CatchUpReader.end(on: connection)
            let end = ends.first { $0.group == 0 } ?? .start
            return try connection.query("""
                INSERT INTO ledger.webhook_endpoints (url, event_types, secret, checkpoint_tx, checkpoint_position, worker_checkpoints)
                VALUES (\(url), \(types)::text[], \(secret), \(String(end.transaction))::xid8, \(end.position),
                        \(JSONB(text: WebhookDispatcher.workerCheckpointsJSON(ends)))::jsonb)
                RETURNING id
                """)[0].decode("id")
        }
        guard let endpoint = try await webhooks().first(where: { $0.id == id }) else {
            throw LedgerError.invalid("id", "endpoint \(id) vanished as it was added")
        }
        return (endpoint, secret)
    }

    /// The endpoints (removed ones left out), with their deliveries counted.
    public func webhooks() async throws -> [WebhookEndpoint] {
        try await pool.withConnection { connection in
            try connection.query("""
                SELECT e.id, e.url, array_to_string(e.event_types, ' ') AS event_types, e.created_at, e.checkpoint_position,
                       e.worker_checkpoints::text AS worker_checkpoints,
                       count(j.id) FILTER (WHERE j.state IN ('pending', 'waiting'))::int AS undelivered,
                       count(j.id) FILTER (WHERE j.state = 'failed')::int AS failed,
                       count(j.id) FILTER (WHERE j.state = 'done')::int AS delivered,
                       min(j.created_at) FILTER (WHERE j.state IN ('pending', 'waiting')) AS oldest
                  FROM ledger.webhook_endpoints e
                  LEFT JOIN ledger.jobs j ON j.kind = 'webhook.delivery' AND j.args->>'endpoint' = e.id::text
                 WHERE e.removed_at IS NULL
                 GROUP BY e.id
                 ORDER BY e.id
                """).map { row in
                let id: Int64 = try row.decode("id")
                let position: Int64 = try row.decode("checkpoint_position")
                let workers = try WebhookDispatcher.workerCheckpoints(try row.decode("worker_checkpoints"), endpoint: id)
                return WebhookEndpoint(
                    id: id, url: try row.decode("url"),
                    eventTypes: try row.decode("event_types", as: String?.self).map { $0.split(separator: " ").map(String.init) },
                    createdAt: try row.decode("created_at"), position: position,
                    cursor: EventCursor(positions: ([position].filter { $0 > 0 } + workers.map(\.position)).sorted()),
                    undelivered: Int(try row.decode("undelivered", as: Int32.self)),
                    failed: Int(try row.decode("failed", as: Int32.self)),
                    delivered: Int(try row.decode("delivered", as: Int32.self)),
                    oldestUndelivered: try row.decode("oldest"))
            }
        }
    }

    /// `ledger webhooks remove`: false when there is no such endpoint. Its deliveries not yet
    /// made are failed with the reason.
    public func removeWebhook(id: Int64) async throws -> Bool {
        try await pool.withConnection { connection in
            try connection.query("SELECT ledger.webhook_remove(\(id)) AS removed")[0].decode("removed")
        }
    }

    /// `ledger webhooks replay --from POSITION`: the endpoint's deliveries from that log position
    /// on, done or failed, are sent again in their order, each with its own event id and body.
    /// Returns how many; nil when there is no such endpoint. The position is in its node group's
    /// order (on one server, the log's): ``replayWebhook(id:from:)-(_,EventCursor)`` replays
    /// several groups.
    public func replayWebhook(id: Int64, from position: Int64) async throws -> Int? {
        guard position >= 1 else { throw LedgerError.invalid("from", "expected a log position (1 or more), got \(position)") }
        return try await replayWebhook(id: id, from: EventCursor(position: position))
    }

    /// The endpoint's deliveries from `start` on, in each node group that `start` names: from
    /// that group's position (included) on in the group's order. A group it does not name is not
    /// replayed: two groups' positions are unrelated (``CatchUpReader``). Returns how many; nil
    /// when there is no such endpoint.
    public func replayWebhook(id: Int64, from start: EventCursor) async throws -> Int? {
        guard !start.positions.isEmpty else { throw LedgerError.invalid("from", "name a log position (1 or more) to replay from") }
        let from = PostgresArray(elements: start.positions.map { .text(String($0)) })
        return try await pool.withConnection { connection in
            try connection.query("SELECT ledger.webhook_replay(\(id), \(from)::bigint[]) AS n")[0].decode("n", as: Int32?.self).map(Int.init)
        }
    }

    /// An endpoint's deliveries in one state (all when nil), newest first: `ledger webhooks
    /// deliveries`, and the failed ones to look at before a replay.
    public func webhookDeliveries(endpoint: Int64, state: JobRecord.State? = nil, limit: Int = 100) async throws -> [JobRecord] {
        try await jobs(state: state, limit: limit, kind: StoreJob.Kind.webhookDelivery.rawValue, endpoint: endpoint)
    }

    /// Where endpoint `id`'s deliveries go and its secret, for the runner; nil once removed.
    func webhookTarget(_ id: Int64) async throws -> (url: String, secret: String)? {
        try await pool.withConnection { connection in
            guard let row = try connection.query("SELECT url, secret FROM ledger.webhook_target(\(id))").first else { return nil }
            return (try row.decode("url"), try row.decode("secret"))
        }
    }
}
