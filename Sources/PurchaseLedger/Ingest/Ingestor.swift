import Foundation
import Logging
import Postgres
import LedgerJSON

/// Runs NDJSON command lines against the ledger (docs/contract.md §2) and reports one result per
/// line, in order. Lines are decoded and validated here; the commands of up to `batchSize`
/// lines go to the database in one pipelined transaction (one round trip, one commit). Each
/// line stays atomic on its own: a refusal writes nothing and the lines around it still apply.
/// Results are reported only after their transaction committed: a reported `recorded` is durable.
public struct Ingestor {
    /// One input line's result.
    public struct LineResult {
        public var line: Int
        public var outcome: CommandOutcome
    }

    /// Totals of a run.
    public struct Summary: Sendable {
        public var lines = 0
        public var rejected = 0
        public var retries = 0
    }

    public var batchSize: Int
    /// Which store notifications are accepted (docs/contract.md §5.1).
    public var stores: StoreConfiguration
    /// How often a batch that lost a deadlock or a serialization race is tried again. After a lost
    /// connection, an idempotent batch is tried again for about a minute, whatever this says.
    public var maxRetries = 20
    /// Where retries, reconnects and split batches are logged.
    public var logger: Logger
    private let connect: () throws -> Connection
    private var connection: Connection?
    /// Whether the ledger runs commands on the users' workers (``CommandRouting``): asked on the
    /// first batch.
    private var commandsOnWorkers: Bool?
    /// Brings a new ledger's planner statistics up to date as the ingest grows it.
    private let statistics = StatisticsUpkeep()

    /// - Parameters:
    ///   - batchSize: lines per transaction (at least 1).
    ///   - stores: which store notifications are accepted.
    ///   - logger: where retries are logged; nil logs nothing.
    ///   - connect: opens a connection; called again after a connection was lost.
    public init(batchSize: Int = 200, stores: StoreConfiguration = .none, logger: Logger? = nil,
                connect: @escaping () throws -> Connection) {
        self.batchSize = max(1, batchSize)
        self.stores = stores
        self.logger = logger ?? .silent
        self.connect = connect
    }

    /// Reads every line of `reader` and hands each result to `report`, in input order; `flush` is
    /// called after each committed batch.
    public mutating func run(_ reader: inout some LineSource, report: (LineResult) -> Void,
                             flush: () -> Void = {}) throws -> Summary {
        var summary = Summary()
        var pending: [(line: Int, command: Result<LedgerCommand, LedgerError>)] = []
        pending.reserveCapacity(batchSize)
        while let line = try reader.next() {
            let number = reader.lineNumber
            switch line {
            case .tooLong(let bytes):
                pending.append((number, .failure(LedgerError(.invalidInput, "the line is \(bytes) bytes long, over the limit of \(4 << 20)"))))
            case .text(let bytes):
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }  // blank lines are skipped
                for command in Self.commands(in: bytes, stores: stores) { pending.append((number, command)) }
            }
            // Send when the batch is full, or when more input would mean waiting for it.
            if pending.count >= batchSize || !reader.hasBufferedLine {
                try send(pending, &summary, report)
                flush()
                pending.removeAll(keepingCapacity: true)
            }
        }
        if !pending.isEmpty {
            try send(pending, &summary, report)
            flush()
        }
        return summary
    }

    /// The commands of one line: one, or for a page of Apple's Get Notification History response
    /// (`{"notificationHistory":[{"signedPayload":...},...]}`), one per notification, in order.
    static func commands(in line: some Collection<UInt8>, stores: StoreConfiguration) -> [Result<LedgerCommand, LedgerError>] {
        let json: JSONValue
        do {
            json = try LedgerCommand.parse(line)
        } catch {
            return [.failure(error)]
        }
        if case .object(let object) = json, object["type"] == nil, let history = object["notificationHistory"] {
            guard case .array(let items) = history else {
                return [.failure(.invalid("notificationHistory", "expected an array, got \(history.typeName)"))]
            }
            return items.enumerated().map { index, item in
                Result { () throws(LedgerError) in
                    guard case .object(let entry) = item else {
                        throw LedgerError.invalid("notificationHistory[\(index)]", "expected an object, got \(item.typeName)")
                    }
                    var notification = entry
                    notification["type"] = .string("appleNotification")
                    return try LedgerCommand(json: .object(notification), stores: stores)
                }
            }
        }
        return [Result { () throws(LedgerError) in try LedgerCommand(json: json, stores: stores) }]
    }

    private mutating func send(_ batch: [(line: Int, command: Result<LedgerCommand, LedgerError>)],
                               _ summary: inout Summary, _ report: (LineResult) -> Void) throws {
        let commands = batch.compactMap { try? $0.command.get() }
        let outcomes = try executeInOrder(commands, &summary)
        var next = outcomes.makeIterator()
        for entry in batch {
            let outcome: CommandOutcome
            switch entry.command {
            case .failure(let error): outcome = CommandOutcome(rejected: error)
            case .success: outcome = next.next()!
            }
            summary.lines += 1
            if outcome.status == .rejected { summary.rejected += 1 }
            report(LineResult(line: entry.line, outcome: outcome))
        }
    }

    /// Runs the commands in one transaction on one server. On a Citus cluster, as the calls of
    /// ``CommandRouting/inOrder(_:)``, one after another, each a transaction on its owner's
    /// worker, with the answers of the lines run in input order: an error then throws after the
    /// calls before it committed, and the lines of the batch get no result, as on one server
    /// (run the file again: its lines are idempotent but a consume, which answers that it was
    /// consumed already).
    private mutating func executeInOrder(_ commands: [LedgerCommand], _ summary: inout Summary) throws -> [CommandOutcome] {
        // Asked once. A connection lost on the way leaves it to the next batch, and this one
        // runs where it is sent, which is right wherever it runs; the batch then finds the
        // connection broken and opens another.
        if commandsOnWorkers == nil {
            commandsOnWorkers = try? openConnection().commandsOnWorkers()
        }
        guard commandsOnWorkers == true else { return try execute(commands, &summary) }
        var outcomes = [CommandOutcome?](repeating: nil, count: commands.count)
        // A refund, a cancel or a notification by the owner its keys' registries name, when they
        // can be asked; by "" otherwise (the call is right wherever it runs).
        let connection = try? openConnection()
        let groups = CommandRouting.resolvingOwners(CommandRouting.inOrder(commands)) { indices in
            (try? connection?.commandOwners(indices.map { commands[$0] })) ?? indices.map { _ in "" }
        }
        for group in groups {
            let answers = try execute(group.indices.map { commands[$0] }, &summary, routedBy: group.owner)
            for (i, answer) in zip(group.indices, answers) { outcomes[i] = answer }
        }
        return outcomes.map { $0! }
    }

    /// Runs the commands in one transaction, under the write path's retry policy
    /// (``CommandRetry/next(after:lost:attempt:commands:idempotent:maxAttempts:)``); an error it
    /// gives up on is thrown: the lines of the batch get no result. `owner` routes the call
    /// (``Connection/executeBatch(_:now:routedBy:)``).
    private mutating func execute(_ commands: [LedgerCommand], _ summary: inout Summary, routedBy owner: String? = nil) throws -> [CommandOutcome] {
        guard !commands.isEmpty else { return [] }
        let commands = commands.map { $0.askingStores(stores) }
        var attempt = 0
        while true {
            attempt += 1
            do {
                let conn = try openConnection()
                let outcomes = try conn.executeBatch(commands, routedBy: owner)
                statistics.committed(commands.count, on: conn, logger: logger)
                return outcomes
            } catch let error as PostgresError {
                let lost = CommandRetry.isLostConnection(error, on: connection)
                if lost {
                    connection?.close()
                    connection = nil
                }
                switch CommandRetry.next(after: error, lost: lost, attempt: attempt, commands: commands.count,
                                         idempotent: commands.allSatisfy(\.isIdempotent), maxAttempts: maxRetries + 1) {
                case .fail:
                    throw error
                case .split:
                    summary.retries += 1
                    CommandRetry.logSplit(logger, after: error, attempt: attempt, commands: commands.count)
                    return try executeInHalves(commands, &summary, routedBy: owner)
                case .retry(let pause):
                    summary.retries += 1
                    CommandRetry.logRetry(logger, after: error, lost: lost, attempt: attempt, commands: commands.count)
                    if pause > 0 { Thread.sleep(forTimeInterval: pause) }
                }
            }
        }
    }

    /// Runs the batch as two smaller ones, in order: each half a transaction of its own.
    private mutating func executeInHalves(_ commands: [LedgerCommand], _ summary: inout Summary, routedBy owner: String?) throws -> [CommandOutcome] {
        let half = commands.count / 2
        return try execute(Array(commands[..<half]), &summary, routedBy: owner)
            + execute(Array(commands[half...]), &summary, routedBy: owner)
    }

    private mutating func openConnection() throws -> Connection {
        if let connection, !connection.isBroken { return connection }
        let fresh = try connect()
        connection = fresh
        return fresh
    }
}

extension Ledger {
    /// Runs `body` with an ``Ingestor`` for this ledger (its stores and logger, the write path's
    /// retry policy) on one pooled connection, held until `body` returns: how `POST /v1/batch`
    /// applies a body exactly as `ledger ingest` applies a file. `body` starts once the
    /// connection is had. A connection lost during the run is not replaced (the lines already
    /// sent may or may not have applied): the ingestor's next batch throws
    /// ``IngestConnectionLost``.
    public func withIngestor<T: Sendable>(batchSize: Int,
                                          _ body: @escaping @Sendable (inout Ingestor) throws -> T) async throws -> T {
        let (stores, logger) = (self.stores, self.logger)
        return try await pool.withConnection { connection in
            var handed = false
            var ingestor = Ingestor(batchSize: batchSize, stores: stores, logger: logger) {
                guard !handed else { throw IngestConnectionLost() }
                handed = true
                return connection
            }
            return try body(&ingestor)
        }
    }
}

/// The connection of ``Ledger/withIngestor(batchSize:_:)`` was lost during the run.
public struct IngestConnectionLost: Error, Sendable {}
