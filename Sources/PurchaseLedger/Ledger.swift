import Foundation
import Logging
import Postgres
import Synchronization

/// The purchase ledger, for a backend service: one call per contract command and per query,
/// each one round trip on a pooled connection. Safe to share between tasks.
///
/// ```swift
/// let ledger = Ledger(databaseURL: "postgresql://ledger@db/ledger")
/// try await ledger.migrate()
/// try await ledger.record(payment)                       // .recorded or .duplicate
/// switch try await ledger.consume(paymentSeq: seq, userId: user, purchaseToken: token) {
/// case .consumed: giveGoods()                            // exactly once per payment
/// case .alreadyConsumed: break
/// }
/// ```
public final class Ledger: Sendable {
    /// The connections behind it: internal to the package (the library's calls are the API).
    package let pool: ConnectionPool

    /// Which store notifications are accepted (docs/contract.md §5.1).
    public let stores: StoreConfiguration
    /// Concurrent commands share transactions through it.
    let groupCommit: GroupCommit
    /// Brings a new ledger's planner statistics up to date as the calls grow it.
    let statistics = StatisticsUpkeep()
    /// Runs the reports (``ReportRunner``): on a share of the pool, under the report timeout.
    package let reports: ReportRunner
    /// Where the queries read: streaming replicas when configured (``ReadReplicas``).
    package let replicas: ReadReplicas
    /// Whether the ledger is distributed on a Citus cluster, where a batch goes as one call per
    /// owner, each run on the owner's worker (``CommandRouting``): asked of the database once
    /// (`ledger.commands_on_workers()`), and again after ``migrate()``.
    let commandsOnWorkers = Mutex<Bool?>(nil)
    /// Commands in one group-commit batch at most: enough to amortise a commit, few enough that
    /// a batch's locks stay short.
    static let maxBatchSize = 32

    /// Batches in flight at once: two (one with a pool of two or three), so that calls beyond
    /// that wait a moment and go together, while queries keep connections of their own. A set
    /// costs the database about 2.2 million instructions however small it is, and each payment
    /// in it about 0.8 million more (BENCHMARKS.md, callgrind): fewer, larger batches do the same
    /// work for less. Two rather than one, so that a batch waiting for a lock another
    /// transaction holds does not hold up every caller. `LEDGER_GROUP_COMMIT_BATCHES` (1 to the
    /// pool's size) overrides it.
    static func concurrentBatches(poolSize: Int) -> Int {
        if let text = ProcessInfo.processInfo.environment["LEDGER_GROUP_COMMIT_BATCHES"], let n = Int(text) { return max(1, min(n, poolSize)) }
        return max(1, min(2, poolSize / 2))
    }
    /// Where the ledger tells what an operator must see: commands run again after a deadlock,
    /// a serialization failure or a lost connection.
    let logger: Logger

    /// - Parameters:
    ///   - databaseURL: a `postgresql://` URL or `key=value` conninfo; nil uses `DATABASE_URL`,
    ///     then libpq's own `PG*` variables.
    ///   - poolSize: how many connections at most.
    ///   - stores: which store notifications are accepted.
    ///   - reportTimeout: how long one report may run before the database stops it (30 s);
    ///     nil for no limit.
    ///   - readDatabaseURLs: streaming replicas of the database the queries and reports read
    ///     from (README, "Reads from replicas"), each with a pool of `poolSize`; nil reads
    ///     `LEDGER_READ_DATABASE_URL` (`;` between several), empty reads the primary only. A
    ///     query sees every command this ledger committed before it: a replica answers once it
    ///     has replayed them, for at most half a second, else the primary does. Reports run on
    ///     the first replica, behind the primary by its replay lag.
    ///   - logger: where retries are logged; nil logs nothing.
    public init(databaseURL: String? = nil, poolSize: Int = 8, stores: StoreConfiguration = .none,
                reportTimeout: Duration? = Ledger.defaultReportTimeout, readDatabaseURLs: [String]? = nil,
                logger: Logger? = nil) {
        pool = ConnectionPool(configuration: Ledger.configuration(databaseURL), size: poolSize)
        replicas = ReadReplicas(urls: readDatabaseURLs ?? ReadReplicas.urls(), poolSize: poolSize, logger: logger ?? .silent)
        reports = ReportRunner(pool: replicas.pools.first ?? pool, poolSize: poolSize, timeout: reportTimeout)
        groupCommit = GroupCommit(maxBatchSize: Ledger.maxBatchSize,
                                  maxConcurrentBatches: Ledger.concurrentBatches(poolSize: poolSize))
        self.stores = stores
        self.logger = logger ?? .silent
    }

    /// The connection settings for a URL given on the command line or in code, else `DATABASE_URL`,
    /// else libpq's `PG*` variables.
    public static func configuration(_ databaseURL: String?) -> ConnectionConfiguration {
        let url = databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"] ?? ""
        return ConnectionConfiguration(url)
    }

    /// Creates or upgrades the schema (``Migrator``): returns what it did, one line each (the
    /// migrations it applied, the definitions, a rebuild of the projections).
    @discardableResult
    public func migrate() async throws -> [String] {
        defer { commandsOnWorkers.withLock { $0 = nil } }
        return try await pool.withConnection { try Migrator().migrate($0) }
    }

    /// Runs one command and returns the contract's outcome; refusals come back as `.rejected`
    /// outcomes, not thrown.
    ///
    /// Concurrent calls share transactions (group commit, `GroupCommit`): a call that finds
    /// no other waiting runs alone at once; under load, the calls waiting are sent together, one
    /// round trip and one commit for all of them, each still atomic on its own and answered
    /// with its own outcome after the commit. A deadlock or a serialization failure (nothing was
    /// committed) runs the batch again, as `ledger ingest` does; so does a lost connection, for
    /// the idempotent commands of it (a consume that may have committed is not run twice).
    public func execute(_ command: LedgerCommand) async throws -> CommandOutcome {
        try await groupCommit.execute(command) { [self] commands in await runBatch(commands) }
    }

    /// Runs concurrent commands and returns one result per command, in order: on one server as
    /// one transaction; on a Citus cluster as one call per owner (``CommandRouting/byOwner(_:)``),
    /// each a transaction on the owner's worker, the calls at once.
    package func runBatch(_ commands: [LedgerCommand]) async -> [Result<CommandOutcome, any Error>] {
        let commands = commands.map { $0.askingStores(stores) }
        guard await runsCommandsOnWorkers() else {
            return await runBatch(commands, routedBy: nil)
        }
        // A refund, a cancel or a notification goes by the owner its keys' registries name, when
        // they can be asked; by "" otherwise (the call is right wherever it runs).
        var groups = CommandRouting.byOwner(commands)
        if let ownerless = groups.first(where: { $0.owner == "" }) {
            let named = (try? await pool.withConnection { try $0.commandOwners(ownerless.indices.map { commands[$0] }) })
                ?? ownerless.indices.map { _ in "" }
            let owners = Dictionary(uniqueKeysWithValues: zip(ownerless.indices, named))
            groups = CommandRouting.resolvingOwners(groups) { $0.map { owners[$0] ?? "" } }
        }
        if groups.count == 1 {
            return await runBatch(commands, routedBy: groups[0].owner)
        }
        var results = [Result<CommandOutcome, any Error>?](repeating: nil, count: commands.count)
        await withTaskGroup(of: (group: CommandRouting.Group, results: [Result<CommandOutcome, any Error>]).self) { tasks in
            for group in groups {
                tasks.addTask {
                    (group, await self.runBatch(group.indices.map { commands[$0] }, routedBy: group.owner))
                }
            }
            for await (group, answers) in tasks {
                for (i, answer) in zip(group.indices, answers) { results[i] = answer }
            }
        }
        return results.map { $0! }
    }

    /// Whether batches go as one call per owner (``commandsOnWorkers``), asked on a pooled
    /// connection the first time; false when it cannot be asked (the call then fails on its own).
    package func runsCommandsOnWorkers() async -> Bool {
        if let known = commandsOnWorkers.withLock({ $0 }) { return known }
        guard let known = try? await pool.withConnection({ try $0.commandsOnWorkers() }) else { return false }
        commandsOnWorkers.withLock { $0 = known }
        return known
    }

    /// Runs commands as one transaction and returns one result per command, in order: the
    /// engine's retry rules (`CommandRetry`) for the library, sent as
    /// ``Connection/executeBatch(_:now:routedBy:)`` sends them.
    private func runBatch(_ commands: [LedgerCommand], routedBy owner: String?) async -> [Result<CommandOutcome, any Error>] {
        let now = Date()
        var attempt = 0
        while true {
            attempt += 1
            let result: Result<[CommandOutcome], FailedAttempt>
            do {
                // The connection says whether it was lost; the pool drops a broken one.
                result = try await pool.withConnection { connection -> Result<[CommandOutcome], FailedAttempt> in
                    do {
                        let outcomes = try connection.executeBatch(commands, now: now, routedBy: owner)
                        self.statistics.committed(commands.count, on: connection, logger: self.logger)
                        self.replicas.committed(on: connection)
                        return .success(outcomes)
                    } catch let error as PostgresError {
                        return .failure(FailedAttempt(error: error, lost: CommandRetry.isLostConnection(error, on: connection)))
                    }
                }
            } catch {
                // No connection (or this task was cancelled while waiting for one): the leader's
                // cancellation must not fail the calls it carries, so they run in a task of their own.
                if error is CancellationError, commands.count > 1 {
                    let rest = Array(commands.dropFirst())
                    return [.failure(error)] + (await Task { await self.runBatch(rest, routedBy: owner) }.value)
                }
                return commands.map { _ in .failure(error) }
            }
            switch result {
            case .success(let outcomes):
                return outcomes.map { .success($0) }
            case .failure(let failed):
                switch CommandRetry.next(after: failed.error, lost: failed.lost, attempt: attempt, commands: commands.count,
                                         idempotent: commands.allSatisfy(\.isIdempotent)) {
                case .retry(let pause):
                    CommandRetry.logRetry(logger, after: failed.error, lost: failed.lost, attempt: attempt, commands: commands.count)
                    if pause > 0 { try? await Task.sleep(for: .seconds(pause)) }
                    continue
                case .split:
                    CommandRetry.logSplit(logger, after: failed.error, attempt: attempt, commands: commands.count)
                    let half = commands.count / 2
                    return await runBatch(Array(commands[..<half]), routedBy: owner) + runBatch(Array(commands[half...]), routedBy: owner)
                case .fail:
                    break
                }
                guard commands.count > 1 else { return [.failure(failed.error)] }
                // Each command on its own: a lost connection runs again only the idempotent ones
                // (a consume that may have committed gets the error), any other error is found
                // out by the command that causes it, and the others still apply.
                var results: [Result<CommandOutcome, any Error>] = []
                for command in commands {
                    if failed.lost && !command.isIdempotent {
                        results.append(.failure(failed.error))
                    } else {
                        results += await runBatch([command], routedBy: owner)
                    }
                }
                return results
            }
        }
    }
    /// A batch that failed, and whether its connection was lost with it.
    private struct FailedAttempt: Error {
        var error: PostgresError
        var lost: Bool
    }

    /// Takes a store's server notification exactly as the store POSTed it: App Store Server
    /// Notifications V2's `{"signedPayload":"..."}` or Google Play's Pub/Sub push body. Verified
    /// against ``stores`` before anything is written; a refusal (`SIGNATURE_INVALID`,
    /// `APP_MISMATCH`, `INVALID_INPUT`) comes back as a `.rejected` outcome. Answer the store
    /// with a 2xx once this returns anything but `.rejected`: the notification is then in the log.
    /// Only what a store sends is taken: a Google body with a `payment` attached is refused
    /// (``LedgerCommand/init(storeNotificationBody:from:stores:)``).
    public func receiveStoreNotification(_ body: some Collection<UInt8>) async throws -> CommandOutcome {
        let command: LedgerCommand
        do {
            command = try LedgerCommand(storeNotificationBody: try LedgerCommand.parse(body), stores: stores)
        } catch {
            return CommandOutcome(rejected: error)
        }
        return try await execute(command)
    }

    /// Records a purchase or a renewal. Throws `LedgerError` when refused.
    public func record(_ payment: Payment, kind: PaymentKind? = nil) async throws -> CommandOutcome.Status {
        let kind = kind ?? (payment.isRenewal ? .renewal : .purchase)
        return try await execute(.record(payment, kind: kind)).get().status
    }

    /// The result of a consume the ledger accepted.
    public enum ConsumeResult: Sendable, Hashable {
        /// This call consumed the payment: hand the goods out now.
        case consumed(at: Date)
        /// An earlier call consumed it at that time: do not hand anything out.
        case alreadyConsumed(at: Date)
    }

    /// Consumes a payment. Among any number of concurrent calls for one payment exactly one
    /// returns `.consumed`. Throws `LedgerError` (`NOT_FOUND`, `USER_INVALID`, `TOKEN_INVALID`,
    /// `NOT_CONSUMABLE`, `REFUNDED`) when refused.
    public func consume(paymentSeq: String, userId: String, purchaseToken: String?,
                        at time: Date? = nil) async throws -> ConsumeResult {
        let outcome = try await execute(.consume(paymentSeq: paymentSeq, userId: userId,
                                                 purchaseToken: purchaseToken, time: time)).get()
        let at = outcome.consumedAt ?? time ?? Date()
        return outcome.status == .consumed ? .consumed(at: at) : .alreadyConsumed(at: at)
    }

    /// Records what a store restored for a user; returns the paymentSeqs new to the ledger and
    /// every subscription payment of that user on that store. All or nothing.
    public func restore(userId: String, storeCode: StoreCode, purchases: [Payment],
                        at time: Date? = nil) async throws -> (recorded: [String], payments: [String]) {
        let outcome = try await execute(.restore(userId: userId, storeCode: storeCode, time: time,
                                                 purchases: purchases)).get()
        return (outcome.recorded ?? [], outcome.payments ?? [])
    }

    /// Records a refund; `.duplicate` when the payment was already refunded.
    public func refund(paymentSeq: String, at time: Date? = nil, reason: String? = nil) async throws -> CommandOutcome.Status {
        try await execute(.refund(paymentSeq: paymentSeq, time: time, reason: reason)).get().status
    }

    /// Records that auto-renew was turned off; `.duplicate` when it already was.
    public func cancelAutoRenew(storeCode: StoreCode, originalTransactionId: String,
                                at time: Date? = nil) async throws -> CommandOutcome.Status {
        try await execute(.cancel(storeCode: storeCode, originalTransactionId: originalTransactionId,
                                  time: time)).get().status
    }

    /// Closes the pool's connections.
    public func close() async {
        await pool.close()
        await replicas.close()
    }
}
