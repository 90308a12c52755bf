import Foundation
import LedgerJSON
import Logging
import Postgres

/// Turns the log into webhook deliveries (README, "Webhooks"). For each endpoint, in one
/// transaction that holds it (`ledger.webhook_lock`): reads the next final events after its
/// checkpoint with the gap-free ``CatchUpReader``, looks for subscriptions whose entitlement
/// ended since its clock with no event (an expiry, a grace period's end: the instant passing is
/// the change), and writes one delivery job per event of a type it receives and per change of a
/// lineage's entitlement, with the checkpoint and the clock moved past them
/// (`ledger.webhook_advance`). A crash before the commit leaves the checkpoint where it was, so
/// nothing read is lost; a crash after it leaves the deliveries to the job runner.
///
/// Each delivery's body is fixed here, once: a retry or a replay sends the same bytes with the
/// same event id. The user's state in it (unconsumed payments, entitled subscriptions) is read
/// by the library's own queries (``UnconsumedPayment``, ``Subscription``) in this transaction: it
/// includes the event, and any later event of the user in the same read.
public struct WebhookDispatcher: Sendable {
    public struct Options: Sendable {
        /// Events read per transaction, at most.
        public var batchSize = 500
        /// How often an idle dispatcher looks again: the bound on how late an expiry with no
        /// event is noticed, and most of the lag from a commit to its delivery.
        public var interval: Duration = .milliseconds(250)

        public init() {}
    }

    /// What one transaction of one endpoint did.
    public struct Step: Sendable, Hashable {
        /// Events read from the log.
        public var read: Int
        /// Deliveries written.
        public var written: Int
    }

    let ledger: Ledger
    let options: Options
    let logger: Logger

    public init(ledger: Ledger, options: Options = Options(), logger: Logger = Logger(label: "ledger.webhooks")) {
        self.ledger = ledger
        self.options = options
        self.logger = logger
    }

    /// Brings every endpoint up to the log's final events and to now. Returns the deliveries
    /// written. An endpoint another dispatcher holds is left to it.
    @discardableResult
    public func dispatchAll() async throws -> Int {
        let ids = try await ledger.pool.withConnection { connection in
            try connection.query("SELECT id FROM ledger.webhook_endpoints WHERE removed_at IS NULL ORDER BY id")
                .map { try $0.decode("id", as: Int64.self) }
        }
        var written = 0
        for id in ids {
            while !Task.isCancelled {
                let batchSize = options.batchSize
                // The horizons first, outside the endpoint's transaction: a worker's is asked over
                // Citus's cached connections only so (CatchUpReader.horizons(on:)).
                let step = try await ledger.pool.withConnection { connection in
                    let horizons = try CatchUpReader.horizons(on: connection)
                    return try connection.transaction { tx in
                        try Self.advance(endpoint: id, batchSize: batchSize, below: horizons, on: tx)
                    }
                }
                written += step.written
                if step.read < batchSize { break }
            }
        }
        return written
    }

    /// `ledger serve`: dispatches every `interval` until the task is cancelled, telling
    /// `onWritten` when deliveries were written (the runner need not wait for its next look). A
    /// database error is logged and tried again at the next look.
    public func runForever(onWritten: @escaping @Sendable () -> Void = {}) async {
        while !Task.isCancelled {
            do {
                if try await dispatchAll() > 0 { onWritten() }
            } catch is CancellationError {
                return
            } catch {
                logger.warning("webhook dispatcher: \(error)")
            }
            try? await Task.sleep(for: options.interval)
        }
    }

    // MARK: One endpoint, one transaction

    /// A lineage, as the webhooks name it.
    struct Lineage: Hashable {
        var store: String
        var id: String
    }

    /// A delivery as `ledger.webhook_advance` takes it.
    struct Delivery {
        var eventId: String
        var type: String
        var queue: String
        var queuePosition: Int64
        var causedBy: Int64?
        var userId: String?
        var body: String
    }

    static func advance(endpoint: Int64, batchSize: Int, below horizons: [(group: Int, horizon: UInt64)],
                        on tx: Connection) throws -> Step {
        guard let held = try tx.query("""
            SELECT checkpoint_tx, checkpoint_position, worker_checkpoints, clock_until, now,
                   array_to_string(event_types, ' ') AS types
              FROM ledger.webhook_lock(\(endpoint))
            """).first else { return Step(read: 0, written: 0) }
        guard let heldTx = UInt64(try held.decode("checkpoint_tx", as: String.self)) else {
            throw PostgresError(kind: .decoding, message: "webhook endpoint \(endpoint): checkpoint_tx is not an xid8")
        }
        let now: Date = try held.decode("now")
        let clockUntil: Date = try held.decode("clock_until")
        let receives = try held.decode("types", as: String?.self).map { Set($0.split(separator: " ").map(String.init)) }
        func wanted(_ type: String) -> Bool { receives?.contains(type) ?? true }

        let workerCheckpoints = try Self.workerCheckpoints(try held.decode("worker_checkpoints"), endpoint: endpoint)
        var reader = CatchUpReader(after: [.init(transaction: heldTx, position: try held.decode("checkpoint_position"))] + workerCheckpoints,
                                   batchSize: batchSize)
        let events = try reader.next(on: tx, below: horizons)
        let parsed = events.map { (try? JSONParser.parse($0.data))?.objectValue ?? JSONObject() }

        // The lineages each event touches: named in its data, or its payment's.
        var paymentSeqs: Set<String> = []
        for data in parsed {
            if let seq = data["paymentSeq"]?.stringValue { paymentSeqs.insert(seq) }
            for seq in data["recorded"]?.arrayValue ?? [] { if let seq = seq.stringValue { paymentSeqs.insert(seq) } }
        }
        var paymentLineage: [String: (Lineage, user: String)] = [:]
        if !paymentSeqs.isEmpty {
            for row in try tx.query("""
                SELECT payment_seq, store_code, lineage_id, user_id FROM ledger.payments
                 WHERE payment_seq = ANY(\(PostgresArray(elements: paymentSeqs.sorted().map { .text($0) }))::text[])
                   AND lineage_id IS NOT NULL
                """) {
                paymentLineage[try row.decode("payment_seq")] =
                    (Lineage(store: try row.decode("store_code"), id: try row.decode("lineage_id")), try row.decode("user_id"))
            }
        }
        var touched: [[(Lineage, user: String)]] = []
        var users: Set<String> = []
        var lastTouch: [Lineage: Int] = [:]
        for (index, data) in parsed.enumerated() {
            var lineages: [(Lineage, user: String)] = []
            if let store = data["storeCode"]?.stringValue, let original = data["originalTransactionId"]?.stringValue,
               let user = data["userId"]?.stringValue {
                lineages.append((Lineage(store: store, id: original), user))
            }
            var seqs = data["recorded"]?.arrayValue?.compactMap(\.stringValue) ?? []
            if let seq = data["paymentSeq"]?.stringValue { seqs.append(seq) }
            for seq in seqs { if let found = paymentLineage[seq] { lineages.append(found) } }
            for (lineage, user) in lineages {
                lastTouch[lineage] = index
                users.insert(user)
            }
            touched.append(lineages)
            if let user = events[index].userId { users.insert(user) }
        }

        // Entitlements that ended since the clock with no event: the instant passing. A span and
        // its lineage are one owner's, and the join says so: on a Citus cluster that makes it a
        // join of colocated shards, where the lineage's key alone needs a repartition Citus refuses.
        var ended: [(Lineage, user: String, at: Date)] = []
        for row in try tx.query("""
            SELECT s.store_code, s.lineage_id, l.user_id, max(s.ends_so_far) AS ended_at
              FROM ledger.entitled_spans s
              JOIN ledger.lineages l
                ON l.user_id = s.user_id AND l.store_code = s.store_code AND l.original_transaction_id = s.lineage_id
             WHERE s.with_sandbox IN (false, true) AND s.ends_so_far > \(clockUntil) AND s.ends_so_far <= \(now)
             GROUP BY 1, 2, 3
             ORDER BY 4, 1, 2
            """) {
            let lineage = Lineage(store: try row.decode("store_code"), id: try row.decode("lineage_id"))
            guard lastTouch[lineage] == nil else { continue }
            let user: String = try row.decode("user_id")
            ended.append((lineage, user, try row.decode("ended_at")))
            users.insert(user)
        }

        // Each user's state now, and what the endpoint was last told of each lineage.
        var subscriptions: [String: [Subscription]] = [:]
        var unconsumed: [String: Int] = [:]
        for user in users {
            subscriptions[user] = try Subscription.fetchAll(tx, userId: user, at: now, includeExpired: true)
            unconsumed[user] = try UnconsumedPayment.fetchAll(tx, userId: user).count
        }
        let lineages = Array(lastTouch.keys) + ended.map(\.0)
        var announced: [Lineage: Bool] = [:]
        if !lineages.isEmpty {
            for row in try tx.query("""
                SELECT store_code, lineage_id, entitled
                  FROM ledger.webhook_announced(\(endpoint), \(PostgresArray(elements: lineages.map { .text($0.store) }))::text[],
                                                \(PostgresArray(elements: lineages.map { .text($0.id) }))::text[])
                """) {
                announced[Lineage(store: try row.decode("store_code"), id: try row.decode("lineage_id"))] = try row.decode("entitled")
            }
        }

        func state(of user: String?, into w: inout JSONWriter) {
            w.key("state")
            guard let user else { w.null(); return }
            w.beginObject()
            w.field("asOf", now)
            w.field("unconsumed", unconsumed[user] ?? 0)
            w.key("entitled")
            w.beginArray()
            for subscription in subscriptions[user] ?? [] where subscription.entitled { subscription.write(into: &w) }
            w.endArray()
            w.endObject()
        }

        var deliveries: [Delivery] = []
        var told: [(Lineage, Bool)] = []
        /// A change of `lineage`'s entitlement, when there is one to tell.
        func change(_ lineage: Lineage, user: String, position: Int64, occurredAt: Date, cause: String,
                    wasEntitledUnlessTold: Bool) {
            let subscription = subscriptions[user]?.first { $0.storeCode.rawValue == lineage.store && $0.originalTransactionId == lineage.id }
            let entitled = subscription?.entitled ?? false
            let before = announced[lineage] ?? wasEntitledUnlessTold
            if announced[lineage] != entitled { told.append((lineage, entitled)) }
            guard entitled != before else { return }
            let type = entitled ? WebhookChange.subscriptionEntitled.rawValue : WebhookChange.subscriptionNotEntitled.rawValue
            guard wanted(type) else { return }
            let id = "\(type):\(lineage.store):\(lineage.id):\(position)"
            var w = JSONWriter()
            w.beginObject()
            w.field("id", id)
            w.field("type", type)
            w.field("userId", user)
            w.key("position")
            w.rawNumber(String(position))
            w.field("cause", cause)
            w.field("occurredAt", occurredAt)
            w.key("data")
            if let subscription { subscription.write(into: &w) } else { w.null() }
            state(of: user, into: &w)
            w.endObject()
            deliveries.append(Delivery(eventId: id, type: type, queue: "webhook:\(endpoint):\(user)", queuePosition: position,
                                       causedBy: cause == "event" ? position : nil, userId: user, body: w.string))
        }

        for (index, event) in events.enumerated() {
            let user = event.userId
            if wanted(event.type) {
                let id = "event:\(event.position)"
                var w = JSONWriter()
                w.beginObject()
                w.field("id", id)
                w.field("userId", user)
                event.writeFields(into: &w, withUser: false)
                state(of: user, into: &w)
                w.endObject()
                deliveries.append(Delivery(eventId: id, type: event.type, queue: "webhook:\(endpoint):\(user ?? event.stream)",
                                           queuePosition: event.position, causedBy: event.position, userId: user, body: w.string))
            }
            for (lineage, owner) in touched[index] where lastTouch[lineage] == index {
                lastTouch[lineage] = -1
                change(lineage, user: owner, position: event.position, occurredAt: event.occurredAt, cause: "event",
                       wasEntitledUnlessTold: false)
            }
        }
        let position = events.last?.position ?? reader.checkpoints.map(\.position).max() ?? 0
        for (lineage, user, at) in ended {
            change(lineage, user: user, position: position, occurredAt: at, cause: "time", wasEntitledUnlessTold: true)
        }

        var w = JSONWriter()
        w.beginArray()
        for delivery in deliveries {
            w.beginObject()
            w.field("purpose", "webhook:\(endpoint):\(delivery.eventId)")
            w.field("queue", delivery.queue)
            w.key("queuePosition")
            w.rawNumber(String(delivery.queuePosition))
            if let causedBy = delivery.causedBy {
                w.key("causedBy")
                w.rawNumber(String(causedBy))
            }
            w.key("args")
            w.beginObject()
            w.field("endpoint", String(endpoint))
            w.field("eventId", delivery.eventId)
            w.field("type", delivery.type)
            w.field("userId", delivery.userId)
            w.field("body", delivery.body)
            w.endObject()
            w.endObject()
        }
        w.endArray()
        let deliveriesJSON = w.string
        w = JSONWriter()
        w.beginArray()
        for (lineage, entitled) in told {
            w.beginObject()
            w.field("storeCode", lineage.store)
            w.field("lineageId", lineage.id)
            w.field("entitled", entitled)
            w.endObject()
        }
        w.endArray()
        let entitlementsJSON = w.string
        let checkpoint = reader.checkpoint(group: 0)
        let written: Int32 = try tx.query("""
            SELECT ledger.webhook_advance(\(endpoint), \(String(checkpoint.transaction))::xid8, \(checkpoint.position),
                                          \(JSONB(text: Self.workerCheckpointsJSON(reader.checkpoints)))::jsonb, \(now), \(JSONB(text: deliveriesJSON))::jsonb,
                                          \(JSONB(text: entitlementsJSON))::jsonb) AS n
            """)[0].decode("n")
        return Step(read: events.count, written: Int(written))
    }

    /// `worker_checkpoints` of an endpoint at `checkpoints`: those of node groups other than 0.
    static func workerCheckpointsJSON(_ checkpoints: [CatchUpReader.Checkpoint]) -> String {
        var w = JSONWriter()
        w.beginArray()
        for checkpoint in checkpoints where checkpoint.group != 0 {
            w.beginObject()
            w.field("tx", String(checkpoint.transaction))
            w.key("position")
            w.rawNumber(String(checkpoint.position))
            w.endObject()
        }
        w.endArray()
        return w.string
    }

    /// An endpoint's checkpoints of node groups other than 0 (`worker_checkpoints`:
    /// `[{"tx": "xid8", "position": n}]`).
    static func workerCheckpoints(_ text: String, endpoint: Int64) throws -> [CatchUpReader.Checkpoint] {
        guard let items = (try? JSONParser.parse(text))?.arrayValue else {
            throw PostgresError(kind: .decoding, message: "webhook endpoint \(endpoint): worker_checkpoints is not a JSON array")
        }
        return try items.map { item in
            guard let object = item.objectValue, let tx = object["tx"]?.stringValue.flatMap(UInt64.init),
                  let position = object["position"]?.int64Value else {
                throw PostgresError(kind: .decoding, message: "webhook endpoint \(endpoint): a worker checkpoint is not {tx, position}")
            }
            return CatchUpReader.Checkpoint(transaction: tx, position: position)
        }
    }
}
