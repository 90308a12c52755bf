import Foundation
import LedgerJSON
import Postgres

/// A job as `ledger jobs list` and `GET /v1/jobs` show it: never its secret.
public struct JobRecord: Sendable, Hashable {
    public enum State: String, Sendable, Hashable, CaseIterable {
        case pending, done, failed
        /// Waits for a fact the ledger does not hold yet: the acknowledgement of a purchase whose
        /// notification is parked, until a line names its owner (then pending).
        case waiting
    }

    public var id: Int64
    public var kind: String
    public var purpose: String
    /// The job's arguments as JSON text (package name, product, notification id and time).
    public var args: String
    public var state: State
    public var attempts: Int
    /// When it runs next (pending), or ran last.
    public var runAfter: Date
    /// A runner holds it until then (it is running).
    public var leasedUntil: Date?
    public var createdAt: Date
    public var finishedAt: Date?
    /// The last failure: the store's HTTP status and own error code, and the reason.
    public var lastStatus: Int?
    public var lastCode: String?
    public var lastError: String?
    /// What its effect did (recorded, duplicate, parked, done, rejected, failed).
    public var outcome: String?
    public var paymentSeq: String?
}

/// A job a runner claimed: the attempt number is the claim.
struct ClaimedJob: Sendable {
    var id: Int64
    var kind: StoreJob.Kind
    var args: [String: String]
    var secret: String?
    var attempt: Int
    var createdAt: Date
}

extension Ledger {
    /// The jobs in one state (all when nil), of one kind (all when nil) and, for webhook
    /// deliveries, of one endpoint, newest first, at most `limit`.
    public func jobs(state: JobRecord.State? = nil, limit: Int = 1000, kind: String? = nil,
                     endpoint: Int64? = nil) async throws -> [JobRecord] {
        try await pool.withConnection { connection in
            try connection.query("""
                SELECT id, kind, purpose, args::text AS args, state, attempts, run_after, leased_until, created_at,
                       finished_at, last_status, last_code, last_error, outcome, payment_seq
                  FROM ledger.jobs
                 WHERE (\(state?.rawValue)::text IS NULL OR state = \(state?.rawValue)::text)
                   AND (\(kind)::text IS NULL OR kind = \(kind)::text)
                   AND (\(endpoint.map(String.init))::text IS NULL OR args->>'endpoint' = \(endpoint.map(String.init))::text)
                 ORDER BY id DESC
                 LIMIT \(limit)
                """).map { row in
                JobRecord(
                    id: try row.decode("id"), kind: try row.decode("kind"), purpose: try row.decode("purpose"),
                    args: try row.decode("args"), state: try row.decodeEnum("state"),
                    attempts: Int(try row.decode("attempts", as: Int32.self)),
                    runAfter: try row.decode("run_after"), leasedUntil: try row.decode("leased_until"),
                    createdAt: try row.decode("created_at"), finishedAt: try row.decode("finished_at"),
                    lastStatus: try row.decode("last_status", as: Int32?.self).map(Int.init),
                    lastCode: try row.decode("last_code"), lastError: try row.decode("last_error"),
                    outcome: try row.decode("outcome"), paymentSeq: try row.decode("payment_seq"))
            }
        }
    }

    /// `ledger jobs retry ID`: a job that failed for good runs again. Returns its state after
    /// the call (`pending`; `done` or `pending` when it had not failed), nil when there is none.
    public func retryJob(id: Int64) async throws -> JobRecord.State? {
        try await pool.withConnection { connection in
            try connection.query("SELECT ledger.retry_job(\(id)) AS state")[0].decode("state", as: String?.self)
                .flatMap(JobRecord.State.init(rawValue:))
        }
    }

    /// The soonest instant a pending job of these kinds is due (nil: none is pending, which
    /// ends `--until-idle`).
    func nextJobDue(kinds: Set<StoreJob.Kind>) async throws -> Date? {
        try await pool.withConnection { connection in
            try connection.query("""
                SELECT min(run_after) AS due FROM ledger.jobs
                 WHERE state = 'pending' AND kind = ANY(\(kinds.list)::text[])
                """)[0].decode("due", as: Date?.self)
        }
    }

    func claimJobs(limit: Int, lease: Duration, kinds: Set<StoreJob.Kind>) async throws -> [ClaimedJob] {
        try await pool.withConnection { connection in
            try connection.query("""
                SELECT id, kind, args::text AS args, secret, attempts, created_at
                  FROM ledger.claim_jobs(\(limit), make_interval(secs => \(lease.seconds)),
                                         \(kinds.list)::text[])
                """).compactMap { row -> ClaimedJob? in
                guard let kind = StoreJob.Kind(rawValue: try row.decode("kind")) else { return nil }
                var args: [String: String] = [:]
                if case .object(let object)? = try? JSONParser.parse(try row.decode("args", as: String.self)) {
                    for (key, value) in object.fields { if let text = value.stringValue { args[key] = text } }
                }
                return ClaimedJob(id: try row.decode("id"), kind: kind, args: args, secret: try row.decode("secret"),
                                  attempt: Int(try row.decode("attempts", as: Int32.self)), createdAt: try row.decode("created_at"))
            }
        }
    }

    /// What `ledger.finish_job` did: the effect's status (`done` when the call was the whole
    /// effect; `duplicate` with a message when another runner had claimed the job), or its refusal.
    struct FinishedJob: Sendable {
        var status: String
        var code: String?
        var message: String?
        var paymentSeq: String?
    }

    /// Applies a job's effect and marks it done in one transaction (`ledger.finish_job`).
    func finishJob(_ job: ClaimedJob, effect: StoreNotification?, follow: [StoreJob]) async throws -> FinishedJob {
        var w = JSONWriter()
        w.beginArray()
        for next in follow { next.write(into: &w) }
        w.endArray()
        let followJSON = w.string
        let effectJSON = effect.map { JSONB(text: $0.eventData()) }
        // Under the write path's retry policy: a deadlock or a serialization failure (nothing
        // committed) finishes again at once; a lost connection is the job's error (the finish
        // may have committed: the job's lease decides), retried with the job's backoff.
        return try await retryingOneCommand(idempotent: false) { connection in
            let row = try connection.query("""
                SELECT status, code, message, payment_seq
                  FROM ledger.finish_job(\(job.id), \(job.attempt), \(effectJSON)::jsonb, \(JSONB(text: followJSON))::jsonb)
                """)[0]
            return FinishedJob(status: try row.decode("status"), code: try row.decode("code"),
                               message: try row.decode("message"), paymentSeq: try row.decode("payment_seq"))
        }
    }

    /// Runs `body`, one command's transaction, on a connection of the pool under the write path's
    /// retry policy (``CommandRetry``): run again after a deadlock, a serialization failure or a
    /// lost claim, and after a lost connection when `idempotent` (a second run changes nothing
    /// the first committed), with the policy's pause.
    func retryingOneCommand<T: Sendable>(idempotent: Bool, _ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await pool.withConnection(body)
            } catch let error as PostgresError {
                let lost = CommandRetry.isLostConnection(error, on: nil)
                guard case .retry(let pause) = CommandRetry.next(after: error, lost: lost, attempt: attempt, commands: 1,
                                                                 idempotent: idempotent) else { throw error }
                CommandRetry.logRetry(logger, after: error, lost: lost, attempt: attempt, commands: 1)
                if pause > 0 { try await Task.sleep(for: .milliseconds(Int(pause * 1000))) }
            }
        }
    }

    /// A transient failure: the job runs again after `delay`, or fails for good after three days of them.
    func postponeJob(_ job: ClaimedJob, delay: Duration, giveUpAfter: Duration, status: Int?, code: String?,
                     error: String) async throws -> JobRecord.State? {
        try await pool.withConnection { connection in
            try connection.query("""
                SELECT ledger.postpone_job(\(job.id), \(job.attempt), make_interval(secs => \(delay.seconds)),
                                           \(status.map(Int32.init))::int, \(code)::text, \(error),
                                           make_interval(secs => \(giveUpAfter.seconds))) AS state
                """)[0].decode("state", as: String?.self).flatMap(JobRecord.State.init(rawValue:))
        }
    }

    /// A failure for good, kept with the store's answer.
    func failJob(_ job: ClaimedJob, status: Int?, code: String?, error: String) async throws {
        try await pool.withConnection { connection in
            _ = try connection.query("""
                SELECT ledger.fail_job(\(job.id), \(job.attempt), \(status.map(Int32.init))::int, \(code)::text, \(error)) AS failed
                """)
        }
    }
}

extension Duration {
    /// Seconds, with the fraction, for `make_interval(secs => …)`.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

extension Set<StoreJob.Kind> {
    /// The kinds as one `text[]` parameter.
    var list: PostgresArray { PostgresArray(elements: map(\.rawValue).sorted().map { .text($0) }) }
}
