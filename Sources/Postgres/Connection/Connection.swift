import CLibPQ
import Foundation

/// One libpq connection (`PGconn`), used synchronously.
///
/// A `Connection` is not thread-safe: use it from one thread at a time. `ConnectionPool` guarantees that by
/// running every use of a connection on that connection's own serial queue.
public final class Connection: @unchecked Sendable {
    // @unchecked: the class owns a `PGconn *` and mutable state without locks. It is Sendable only so that
    // ownership can move between threads (into the pool, onto the connection's serial queue); libpq allows a
    // connection to move between threads as long as only one uses it at a time, which the pool enforces.

    /// The `PGconn *`; nil once `close()` ran.
    private var handle: OpaquePointer?
    /// Set by the notice receiver when the server sent a FATAL/PANIC message while the connection was idle.
    private let fatalNoticeReceived: UnsafeMutablePointer<Bool>
    /// Set when the connection's state is unknown (a failed ROLLBACK, an interrupted pipeline).
    var markedBroken = false
    /// Depth of `savepoint(_:)` nesting, for savepoint names.
    var savepointDepth = 0
    /// Server-side prepared statements of this session, by statement text and parameter types.
    var preparedStatements: [PreparationKey: String] = [:]
    /// What another thread uses to stop this connection's running statement (`PQgetCancel`).
    let cancelKey: CancelKey?
    /// The switch of the current use, when its caller may cancel it (``ConnectionPool``); once
    /// it is thrown, no further statement of that use is sent.
    var cancellation: StatementCancellation?

    private init(handle: OpaquePointer) {
        self.handle = handle
        cancelKey = CancelKey(handle)
        fatalNoticeReceived = .allocate(capacity: 1)
        fatalNoticeReceived.initialize(to: false)
    }

    deinit {
        close()
        fatalNoticeReceived.deallocate()
    }

    /// Opens a connection with `PQconnectdbParams` (`expand_dbname = 1`), silences notices
    /// (`PQsetNoticeProcessor`, `PQsetNoticeReceiver`) and sets the session to UTC, ISO dates, UTF-8 and
    /// exact floats.
    ///
    /// Throws `.connection` with libpq's message on one line, without the conninfo or any password.
    public static func connect(_ configuration: ConnectionConfiguration) throws -> Connection {
        let parameters = configuration.parameters
        guard parameters.allSatisfy({ !$0.keyword.utf8.contains(0) && !$0.value.utf8.contains(0) }) else {
            throw PostgresError(kind: .connection, message: "the connection configuration contains U+0000 (NUL)")
        }
        let handle = withCStrings(parameters.map(\.keyword)) { keywords in
            withCStrings(parameters.map(\.value)) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let handle else { throw PostgresError(kind: .connection, message: "libpq could not allocate a connection") }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = Redaction.connectionMessage(String(cString: PQerrorMessage(handle)), conninfo: configuration.conninfo)
            PQfinish(handle)
            throw PostgresError(kind: .connection, message: message.isEmpty ? "could not connect" : message)
        }
        let connection = Connection(handle: handle)
        do {
            try connection.configureSession()
        } catch var error as PostgresError {
            connection.close()
            error.kind = .connection
            throw error
        }
        return connection
    }

    private func configureSession() throws {
        guard let handle else { return }
        // No NOTICE/WARNING noise on stderr. The receiver replaces libpq's default one (which would call the
        // processor) and also notices a FATAL message the server sends to an idle connection before closing it.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        PQsetNoticeReceiver(
            handle,
            { flag, result in
                guard let flag, let result, let severity = PQresultErrorField(result, Diagnostic.severity) else { return }
                let level = String(cString: severity)
                if level == "FATAL" || level == "PANIC" { flag.assumingMemoryBound(to: Bool.self).pointee = true }
            }, UnsafeMutableRawPointer(fatalNoticeReceived))
        try executeScript(
            unsafeSQL:
                "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET client_encoding = 'UTF8'; SET extra_float_digits = 3")
    }

    /// True after a connection-class failure: `PQstatus` is `CONNECTION_BAD`, the server sent SQLSTATE class 08
    /// or 57P01–57P03, a ROLLBACK failed, or the connection was closed. A broken connection refuses further use.
    public var isBroken: Bool {
        guard let handle else { return true }
        return markedBroken || fatalNoticeReceived.pointee || PQstatus(handle) == CONNECTION_BAD
    }

    /// True while a transaction block is open on the connection (`PQtransactionStatus` is not
    /// idle): between `BEGIN` and its end, also after a failed statement. False once closed.
    public var isInTransaction: Bool {
        guard let handle else { return false }
        let status = PQtransactionStatus(handle)
        return status != PQTRANS_IDLE && status != PQTRANS_UNKNOWN
    }

    /// A configuration that reaches another server of a cluster as this connection reached its
    /// own: the settings libpq used for it (`PQconninfo`: user, password, database, TLS and the
    /// rest) with `host` and `port` in place of its own, for a node whose address the database
    /// names (a Citus worker in `pg_dist_node`). Holds the password when there is one: do not
    /// print it.
    public func configuration(host: String, port: Int, applicationName: String = "purchase-ledger") throws -> ConnectionConfiguration {
        guard let handle, let options = PQconninfo(handle) else {
            throw PostgresError(kind: .connection, message: "the connection is closed")
        }
        defer { PQconninfoFree(options) }
        let own = ConnectionConfiguration.options(in: options)
            .filter { !["host", "hostaddr", "port", "application_name"].contains($0.keyword) }
        return ConnectionConfiguration(ConnectionConfiguration.keywordConninfo(own + [("host", host), ("port", String(port))]),
                                       applicationName: applicationName)
    }

    /// The server process serving this connection (`PQbackendPID`); 0 once closed.
    public var serverProcessID: Int32 {
        handle.map(PQbackendPID) ?? 0
    }

    /// Closes the connection (`PQfinish`). Safe to call more than once; `deinit` calls it as a safety net.
    public func close() {
        if let handle {
            PQfinish(handle)
            self.handle = nil
        }
    }

    /// The handle, or an error when the connection was closed or is broken, or when the current
    /// use was cancelled (``PostgresError/cancelled``). `BEGIN`, `COMMIT` and `ROLLBACK` pass
    /// `framing`: a cancelled use still ends its transaction.
    func usableHandle(framing: Bool = false) throws -> OpaquePointer {
        guard let handle else { throw PostgresError.client("the connection is closed") }
        guard !isBroken else {
            throw PostgresError(kind: .connectionBroken, message: "the connection is broken; open a new one")
        }
        if !framing, cancellation?.isCancelled == true { throw PostgresError.cancelled }
        return handle
    }

    /// Reads whatever the server sent while the connection sat idle (`poll`, `PQconsumeInput`, `PQisBusy`),
    /// so a terminated backend is noticed before a statement is sent to it. Returns false when it is broken.
    func checkIdleConnection() -> Bool {
        guard let handle, !isBroken else { return false }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        var rounds = 0  // the FATAL message, then end of file; bounded in case the server keeps talking
        while rounds < 4, !isBroken, poll(&descriptor, 1, 0) > 0, PQconsumeInput(handle) == 1 {
            _ = PQisBusy(handle)  // parses; an ErrorResponse while idle goes to the notice receiver
            rounds += 1
        }
        return !isBroken
    }

    /// The `PostgresError` for a failed result, marked `.connectionBroken` when the connection cannot continue.
    func error(from result: OpaquePointer) -> PostgresError {
        var error = PostgresError(result: result)
        if error.sqlState?.isConnectionClass == true { markedBroken = true }
        if isBroken { error.kind = .connectionBroken }
        return error
    }

    /// The error for a libpq call that failed without a result (`PQerrorMessage`).
    func failure(_ handle: OpaquePointer, fallback: String) -> PostgresError {
        PostgresError(kind: isBroken ? .connectionBroken : .client, connection: handle, fallback: fallback)
    }
}

/// A NULL-terminated array of C strings, valid during `body`.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let pointers = copies.map { UnsafePointer($0) } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
