import Foundation
import Postgres
import PurchaseLedger

/// The ledger over HTTP: a `ledger serve` process of its own (the binary beside this one) on
/// loopback, driven by `HTTPLoad`'s keep-alive connections, beside the library's own figures.
struct HTTPPaths {
    let conninfo: String
    let ledgerBinary: String
    /// Database connections of the server, and of the library when it is compared with it.
    let poolSize: Int

    /// Starts `ledger serve` on a free port with a writer key made for it; stops it after `body`
    /// unless `body` stopped it (SIGTERM) itself.
    func withServer<T>(_ body: (ServeProcess) throws -> T) throws -> T {
        let key = try run(ledgerBinary, ["keys", "add", "--role", "writer", "--database-url", conninfo])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let server = try ServeProcess(binary: ledgerBinary, conninfo: conninfo, poolSize: poolSize, key: key)
        defer { server.stop() }
        return try body(server)
    }

    /// `POST /v1/purchases` per second over `connections` connections; every answer must be
    /// 200 `recorded`.
    func recordRate(_ server: ServeProcess, connections: Int, seconds: Double, tag: String) throws -> HTTPLoad.Result {
        let key = server.key
        return HTTPLoad.run(port: server.port, connections: connections, seconds: seconds) { connection, client, n in
            let answer = try connection.post("/v1/purchases", key: key, json: purchaseJSON("\(tag)-\(client)-\(n)", user: n))
            guard answer.status == 200, answer.body.contains(#""status":"recorded""#) else {
                throw BenchError("POST /v1/purchases answered \(answer.status): \(answer.body.prefix(200))")
            }
        }
    }

    /// `POST /v1/consumes` per second over `connections` connections, each consuming payments of
    /// its own recorded beforehand; every answer must be 200 `consumed`.
    func consumeRate(_ server: ServeProcess, connections: Int, seconds: Double, perClient: Int, tag: String) throws -> HTTPLoad.Result {
        try LedgerPaths(conninfo: conninfo).recordForConsumes(clients: connections, perClient: perClient, tag: tag)
        let key = server.key
        return HTTPLoad.run(port: server.port, connections: connections, seconds: seconds, limit: perClient) { connection, client, n in
            let seq = "\(tag)-\(client)-\(n)"
            let body = #"{"userId":"\#(benchUser(n))","paymentSeq":"\#(seq)","purchaseToken":"tok-\#(seq)"}"#
            let answer = try connection.post("/v1/consumes", key: key, json: body)
            guard answer.status == 200, answer.body.contains(#""status":"consumed""#) else {
                throw BenchError("POST /v1/consumes answered \(answer.status): \(answer.body.prefix(200))")
            }
        }
    }

    /// Under load from `connections` connections, sends the server SIGTERM after `after` seconds;
    /// returns how many purchases were acknowledged (200), how many of those the log lacks (must
    /// be 0), and the server's exit status.
    func sigtermUnderLoad(connections: Int, after: Double, tag: String) throws -> (acknowledged: Int, lost: Int, exitStatus: Int32) {
        try withServer { server in
            let acknowledged = AcknowledgedPayments()
            let key = server.key
            let stopper = Thread {
                Thread.sleep(forTimeInterval: after)
                server.terminate()
            }
            stopper.start()
            // Each thread stops at its first failure: the refused or closed connection after shutdown.
            _ = HTTPLoad.run(port: server.port, connections: connections, seconds: after + 30) { connection, client, n in
                let seq = "\(tag)-\(client)-\(n)"
                let answer = try connection.post("/v1/purchases", key: key, json: purchaseJSON(seq, user: n))
                if answer.status == 200 { acknowledged.add(seq) }
                guard answer.status == 200 else { throw BenchError("answered \(answer.status)") }
            }
            let status = server.waitForExit()
            let connection = try Connection.connect(ConnectionConfiguration(conninfo))
            defer { connection.close() }
            let logged = Set(try connection.query("SELECT payment_seq FROM ledger.payments WHERE payment_seq LIKE \(tag + "-%")")
                .map { try $0.decode("payment_seq", as: String.self) })
            let all = acknowledged.all
            return (all.count, Set(all).subtracting(logged).count, status)
        }
    }

    /// The library's latency of one `record` at a time, in milliseconds, as the HTTP figure's reference.
    func libraryRecordLatencies(calls: Int, tag: String) async throws -> [Double] {
        let ledger = Ledger(databaseURL: conninfo, poolSize: poolSize)
        var latencies: [Double] = []
        for n in 0..<calls {
            let began = DispatchTime.now().uptimeNanoseconds
            _ = try await ledger.record(benchPayment("\(tag)-\(n)", user: n), kind: .purchase)
            latencies.append(Double(DispatchTime.now().uptimeNanoseconds - began) / 1e6)
        }
        await ledger.close()
        return latencies
    }
}

/// The body of `POST /v1/purchases` for the bench's payment `seq` (the same fields as `benchPayment`).
func purchaseJSON(_ seq: String, user n: Int) -> String {
    let millis = (1_767_225_600 + Double(n) * 7.3) * 1000
    return #"{"userId":"\#(benchUser(n))","storeCode":"AS","productId":"gem_100","productType":"CONSUMABLE","#
        + #""price":"0.99","currency":"USD","paymentSeq":"\#(seq)","purchaseToken":"tok-\#(seq)","#
        + #""transactionId":"B-\#(seq)","purchaseTime":\#(Int64(millis))}"#
}

/// The payment sequences the server acknowledged, gathered from the load threads.
final class AcknowledgedPayments: @unchecked Sendable {
    // @unchecked: every access holds `lock`.
    private let lock = NSLock()
    private var seqs: [String] = []

    func add(_ seq: String) {
        lock.lock()
        seqs.append(seq)
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return seqs
    }
}

/// A running `ledger serve --port 0`, its bound port, and the writer key made for it.
final class ServeProcess: @unchecked Sendable {
    // @unchecked: `process` is only started, signalled and waited for.
    let port: Int
    let key: String
    private let process = Process()

    /// `environment` is added to this process's own (the store variables of a figure).
    init(binary: String, conninfo: String, poolSize: Int, key: String, environment: [String: String] = [:]) throws {
        self.key = key
        process.executableURL = URL(fileURLWithPath: binary)
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.arguments = ["serve", "--port", "0", "--pool-size", String(poolSize), "--database-url", conninfo]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line is "listening on http://127.0.0.1:PORT".
        var text = ""
        let reader = output.fileHandleForReading
        while !text.contains("\n") {
            let data = reader.availableData
            guard !data.isEmpty else { throw BenchError("ledger serve exited before it listened") }
            text += String(decoding: data, as: UTF8.self)
        }
        guard let port = text.split(separator: "\n").first?.split(separator: ":").last.flatMap({ Int($0) }) else {
            throw BenchError("ledger serve printed \(text.prefix(100))")
        }
        self.port = port
    }

    func terminate() { process.terminate() }

    func waitForExit() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}
