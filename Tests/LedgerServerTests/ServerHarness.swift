import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import LedgerServer
import LedgerTestSupport
import Logging
import Postgres
import PurchaseLedger
import ServiceLifecycle

/// A `ledger serve` application started in-process on a free loopback port, against a database
/// of the test's own, reached over real HTTP (URLSession, a client independent of the server's).
struct ServerHarness: Sendable {
    let port: Int
    let database: TestDatabase
    let ledger: Ledger
    let log: LogCapture

    /// Starts the server on a fresh migrated database (or not migrated), runs `body`, stops it.
    static func with(migrated: Bool = true, stores: StoreConfiguration = .none,
                     _ configure: @Sendable (inout ServerConfiguration) -> Void = { _ in },
                     databaseURL: String? = nil, poolSize: Int = 4, loginIn roles: [String] = [],
                     readingReplica: Bool = false,
                     _ body: @Sendable (ServerHarness) async throws -> Void) async throws {
        try await TestDatabase.with(migrated: migrated) { database in
            // The test server's streaming replica, as LEDGER_READ_DATABASE_URL would name it.
            var replica: Connection? = nil
            var readDatabaseURLs: [String] = []
            if readingReplica {
                let (connection, conninfo) = try await TestReplica.connect(to: database)
                replica = connection
                readDatabaseURLs = [conninfo]
            }
            defer { replica?.close() }
            // A LOGIN role of this test's own in `roles` (roles are cluster-wide: a unique name).
            var databaseURL = databaseURL
            let login = "ls_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
            if !roles.isEmpty {
                try database.withConnection { _ = try $0.query("CREATE ROLE \(identifier: login) LOGIN IN ROLE \(unsafeSQL: roles.joined(separator: ", "))") }
                databaseURL = "\(database.conninfo) user=\(login)"
            }
            defer {
                if !roles.isEmpty { _ = try? database.withConnection { try $0.query("DROP ROLE IF EXISTS \(identifier: login)") } }
            }
            var configuration = ServerConfiguration()
            configuration.port = 0
            configuration.stores = stores
            configuration.keyRefreshInterval = .zero
            configure(&configuration)
            let ledger = Ledger(databaseURL: databaseURL ?? database.conninfo, poolSize: poolSize, stores: configuration.stores,
                                reportTimeout: configuration.reportTimeout, readDatabaseURLs: readDatabaseURLs)
            let log = LogCapture()
            let (ports, bound) = AsyncStream.makeStream(of: Int.self)
            let app = LedgerServer.application(ledger: ledger, configuration: configuration, logger: log.logger()) {
                bound.yield($0)
            }
            let group = ServiceGroup(configuration: .init(services: [app], logger: log.logger()))
            let outcome: Result<Void, any Error> = await withTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try? await group.run() }
                var next = ports.makeAsyncIterator()
                guard let port = await next.next() else { return .failure(TestSetupError("the server did not start")) }
                let result: Result<Void, any Error>
                do {
                    try await body(ServerHarness(port: port, database: database, ledger: ledger, log: log))
                    result = .success(())
                } catch {
                    result = .failure(error)
                }
                await group.triggerGracefulShutdown()
                await tasks.waitForAll()
                return result
            }
            await ledger.close()
            try outcome.get()
        }
    }

    /// Makes an API key of `role` as `ledger keys add` does, and returns it.
    func key(_ role: APIKeyRole) throws -> String {
        try database.withConnection { try $0.addAPIKey(role: role).key }
    }

    /// Sends a request; `key` goes in `Authorization: Bearer`.
    func send(_ method: String, _ uri: String, key: String? = nil, body: String? = nil,
              headers: [String: String] = [:]) async throws -> Reply {
        try await HTTP.send(method, "http://127.0.0.1:\(port)\(uri)", key: key, body: body, headers: headers)
    }

    /// Everything the ledger holds, to check that a refusal wrote nothing.
    func snapshot() throws -> LedgerSnapshot {
        try database.withConnection { try LedgerSnapshot($0) }
    }
}

/// Real HTTP requests over loopback, through URLSession (libcurl), one session per request.
enum HTTP {
    static func send(_ method: String, _ url: String, key: String? = nil, body: String? = nil,
                     headers: [String: String] = [:], timeout: TimeInterval = 120) async throws -> Reply {
        var request = URLRequest(url: URL(string: url)!, timeoutInterval: timeout)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let key { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = Data(body.utf8)
            if headers["Content-Type"] == nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        }
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            fields[String(describing: name).lowercased()] = String(describing: value)
        }
        return Reply(status: http.statusCode, headers: fields, text: String(decoding: data, as: UTF8.self))
    }
}

/// A response as the tests read it.
struct Reply: Sendable {
    let status: Int
    /// Header values by lower-case name.
    let headers: [String: String]
    let text: String

    func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The body as a JSON object (Foundation's parser, independent of the ledger's own).
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
    }

    /// The body as a JSON array of objects.
    var array: [[String: Any]] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]) ?? []
    }

    var code: String? { json["code"] as? String }
    var message: String { json["message"] as? String ?? "" }
}
