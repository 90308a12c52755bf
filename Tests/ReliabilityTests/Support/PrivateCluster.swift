import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL cluster of one test's own, for what must not happen to the shared test
/// server (other suites run on it in parallel): crashing it, or logging every statement.
///
/// It lives in a fresh folder under /tmp (data, unix socket and log), listens on no TCP port,
/// trusts local connections, and is stopped and deleted by `with`. The binaries come from
/// `LEDGER_PG_BIN` (default /usr/lib/postgresql/15/bin). PostgreSQL refuses to run as root, so
/// when the tests run as root the cluster runs as `LEDGER_PG_OS_USER` (default `ledgerpg`, the
/// user scripts/pg.sh creates) through `runuser`, as scripts/pg.sh does.
final class PrivateCluster: @unchecked Sendable {
    // @unchecked: immutable after init; the methods run external commands only.
    let directory: ScratchDirectory
    let port: Int
    var dataDirectory: String { directory.file("data") }
    var logFile: String { directory.file("postgres.log") }
    /// Conninfo of the cluster's superuser `ledger`, without dbname.
    var server: String { "host=\(directory.url.path) port=\(port) user=ledger" }
    /// Conninfo of the migrated database `ledger`.
    var conninfo: String { "\(server) dbname=ledger" }

    private static var binaries: String {
        ProcessInfo.processInfo.environment["LEDGER_PG_BIN"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/lib/postgresql/15/bin"
    }
    private static var osUser: String {
        ProcessInfo.processInfo.environment["LEDGER_PG_OS_USER"].flatMap { $0.isEmpty ? nil : $0 } ?? "ledgerpg"
    }

    /// The Citus workers of a cluster made with `citus: true`, empty otherwise. The cluster
    /// itself is then their coordinator.
    private(set) var workers: [PrivateCluster] = []

    /// Whether the tests that can run on either should make a Citus cluster: LEDGER_TEST_CITUS=1
    /// (`scripts/dev test` sets it when it runs them again on Citus; Citus must be installed).
    static var citusAsked: Bool { ProcessInfo.processInfo.environment["LEDGER_TEST_CITUS"] == "1" }

    /// Creates, starts and migrates a cluster with `settings` added to postgresql.conf, runs
    /// `body`, then stops the cluster and deletes its folder, whatever `body` did. With
    /// `nextTransactionID`, the migrated cluster is stopped and restarted with its transaction
    /// id counter moved forward to that value (`setNextTransactionID`), so that the first
    /// transaction `body` starts gets that id.
    ///
    /// With `citus`, the cluster is a Citus coordinator with two workers of their own, each a
    /// cluster like it, and the migration distributes the ledger on them (as `ledger migrate`
    /// does on any coordinator with workers). `nextTransactionID` moves every node's counter: the
    /// log's `tx` is the transaction id of the worker that holds the event. Citus's recovery of prepared
    /// transactions runs every second, as docs/scale-out.md advises for the readers.
    static func with<T>(settings: [String] = [], nextTransactionID: UInt32? = nil, citus: Bool = false,
                        _ body: (PrivateCluster) async throws -> T) async throws -> T {
        let cluster = try PrivateCluster()
        defer { cluster.destroy() }
        if citus {
            for _ in 0..<2 { cluster.workers.append(try newWorker()) }
        }
        try cluster.create(settings: (citus ? Self.citusSettings + [cluster.localHostname] : []) + settings)  // the test's own settings last, to win
        try cluster.start()
        try cluster.createLedgerDatabase(citus: citus)
        let connection = try cluster.connect()
        if citus {
            try connection.query("SELECT citus_set_coordinator_host(\(cluster.directory.url.path), \(cluster.port))")
            for worker in cluster.workers {
                try connection.query("SELECT citus_add_node(\(worker.directory.url.path), \(worker.port))")
            }
        }
        try Migrator().migrate(connection)
        connection.close()
        if let nextTransactionID {
            for node in [cluster] + cluster.workers {
                try node.stop()
                try node.setNextTransactionID(nextTransactionID)
                try node.start()
            }
        }
        return try await body(cluster)
    }

    /// Adds a worker of its own to this Citus coordinator, as an operator adds a machine,
    /// registered by `citus_add_node`, which sends it the ledger's objects from the coordinator.
    /// It holds no shard until a rebalance moves some there; its first command makes its scratch
    /// tables (`ledger.spans_scratch_here`).
    func addWorker() throws -> PrivateCluster {
        let worker = try Self.newWorker()
        workers.append(worker)
        let connection = try connect()
        defer { connection.close() }
        try connection.query("SELECT citus_add_node(\(worker.directory.url.path), \(worker.port))")
        return worker
    }

    /// A started Citus node with the `citus` extension in its `ledger` database, not yet
    /// registered with a coordinator.
    private static func newWorker() throws -> PrivateCluster {
        let worker = try PrivateCluster()
        do {
            try worker.create(settings: citusSettings + [worker.localHostname])
            try worker.start()
            try worker.createLedgerDatabase(citus: true)
        } catch {
            worker.destroy()
            throw error
        }
        return worker
    }

    /// The address by which Citus on this node connects to the node itself (a shard move's
    /// copy does): its socket's folder, as the cluster names its nodes. Citus's default,
    /// `localhost`, reaches no node of a cluster that listens on no TCP port.
    private var localHostname: String { "citus.local_hostname = '\(directory.url.path)'" }

    private static let citusSettings = [
        "shared_preload_libraries = 'citus'",
        "max_prepared_transactions = 100",
        "citus.recover_2pc_interval = '1s'",
    ]

    /// Creates the database `ledger`, with the citus extension when asked.
    private func createLedgerDatabase(citus: Bool) throws {
        let admin = try Connection.connect(ConnectionConfiguration("\(server) dbname=postgres"))
        try admin.executeScript(unsafeSQL: "CREATE DATABASE ledger")
        admin.close()
        guard citus else { return }
        let connection = try connect()
        try connection.executeScript(unsafeSQL: "SET client_min_messages = warning; CREATE EXTENSION citus")
        connection.close()
    }

    private init() throws {
        directory = try ScratchDirectory()
        port = 20000 + Int.random(in: 0..<30000)
        try Self.handToServerUser(directory.url.path)
    }

    /// When the tests run as root, gives `path` to the OS user the cluster runs as.
    private static func handToServerUser(_ path: String) throws {
        guard getuid() == 0 else { return }
        guard let account = getpwnam(osUser) else {
            throw TestSetupError("the OS user \(osUser) for PostgreSQL does not exist (scripts/dev start creates it)")
        }
        guard chown(path, account.pointee.pw_uid, account.pointee.pw_gid) == 0 else {
            throw TestSetupError("cannot hand \(path) to \(osUser)")
        }
    }

    private func create(settings: [String]) throws {
        try pg("initdb", ["-D", dataDirectory, "-U", "ledger", "--auth=trust", "-E", "UTF8",
                               "--locale=C.UTF-8", "--no-sync"])
        let conf = ([
            "listen_addresses = ''",
            "unix_socket_directories = '\(directory.url.path)'",
            "port = \(port)",
            "max_connections = 200",
            "shared_buffers = 32MB",
        ] + settings).joined(separator: "\n") + "\n"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: dataDirectory + "/postgresql.conf"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(conf.utf8))
        try handle.close()
    }

    /// Starts the server and waits until it accepts connections (crash recovery included).
    func start() throws {
        try pg("pg_ctl", ["-D", dataDirectory, "-l", logFile, "-w", "-t", "120", "start"])
    }

    /// `pg_ctl stop -m fast`: a clean shutdown, with a checkpoint.
    func stop() throws {
        try pg("pg_ctl", ["-D", dataDirectory, "-m", "fast", "-w", "stop"])
    }

    /// Moves the transaction id counter of the stopped (cleanly) cluster forward to `xid`, with
    /// `pg_resetwal -x`. The server reads the commit-status page of its next id from pg_xact
    /// when it starts and refuses to start when that segment file is missing ("Could not open
    /// file pg_xact/0009"), so this also creates that segment, zero-filled (no transaction in it
    /// has a status yet): 2 bits per id, 32 pages of 8 KiB, so 1,048,576 ids per segment, named
    /// by its number in four hex digits.
    func setNextTransactionID(_ xid: UInt32) throws {
        try pg("pg_resetwal", ["-x", String(xid), "-D", dataDirectory])
        let segment = dataDirectory + "/pg_xact/" + String(format: "%04X", xid / 1_048_576)
        guard !FileManager.default.fileExists(atPath: segment) else { return }
        guard FileManager.default.createFile(atPath: segment, contents: Data(count: 32 * 8192),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw TestSetupError("cannot create \(segment)")
        }
        try Self.handToServerUser(segment)
    }

    /// `pg_ctl stop -m immediate`: every server process quits at once, without a checkpoint, as in a crash.
    func stopImmediately() throws {
        try pg("pg_ctl", ["-D", dataDirectory, "-m", "immediate", "-w", "stop"])
    }

    func connect() throws -> Connection {
        try Connection.connect(ConnectionConfiguration(conninfo))
    }

    /// The server's log so far.
    var log: String {
        (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
    }

    private func destroy() {
        for worker in workers { worker.destroy() }
        if FileManager.default.fileExists(atPath: dataDirectory + "/postmaster.pid") {
            _ = try? pg("pg_ctl", ["-D", dataDirectory, "-m", "immediate", "-w", "stop"])
        }
        directory.remove()
    }

    /// Runs a PostgreSQL program as the cluster's OS user and waits for it; throws with its
    /// output when it fails. (posix_spawn and waitpid rather than Foundation's Process, whose
    /// waitUntilExit was seen to miss the exit of `runuser pg_ctl start` and wait forever.)
    private func pg(_ program: String, _ arguments: [String]) throws {
        let path = Self.binaries + "/" + program
        let argv = getuid() == 0 ? ["/usr/sbin/runuser", "-u", Self.osUser, "--", path] + arguments : [path] + arguments
        let output = directory.file("\(program).out")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var pid: pid_t = 0
        let cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, cArguments, environ)
        guard spawned == 0 else { throw TestSetupError("cannot start \(argv[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw TestSetupError("\(program) \(arguments.joined(separator: " ")) failed (status \(status)): \(text)")
        }
    }
}
