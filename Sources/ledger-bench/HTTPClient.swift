import Foundation

/// One keep-alive HTTP/1.1 connection over loopback with blocking sockets: the load generator's
/// side, kept as cheap as a client can be so the figures are the server's. Each load thread owns
/// one; responses must carry `Content-Length` (every `ledger serve` answer but the batch stream does).
final class HTTPConnection {
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw BenchError("connect to 127.0.0.1:\(port): errno \(errno)")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    /// `POST path` with a JSON body and a bearer key (none when empty); returns the status and the body.
    func post(_ path: String, key: String, json: String) throws -> (status: Int, body: String) {
        let body = Array(json.utf8)
        let head = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n" + (key.isEmpty ? "" : "Authorization: Bearer \(key)\r\n")
            + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
        try write(Array(head.utf8) + body)
        return try readResponse()
    }

    private func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw BenchError("send: errno \(errno)") }
            offset += sent
        }
    }

    private func readResponse() throws -> (status: Int, body: String) {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            headEnd = find(separator, in: buffer)
            if headEnd == nil { try fill() }
        }
        let head = String(decoding: buffer[..<headEnd!], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.count >= 12, let status = Int(statusLine.dropFirst(9).prefix(3)) else {
            throw BenchError("not an HTTP response: \(head.prefix(80))")
        }
        guard let lengthLine = lines.first(where: { $0.lowercased().hasPrefix("content-length:") }),
              let length = Int(lengthLine.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { throw BenchError("response without Content-Length") }
        let bodyStart = headEnd! + separator.count
        while buffer.count < bodyStart + length { try fill() }
        let body = String(decoding: buffer[bodyStart..<(bodyStart + length)], as: UTF8.self)
        buffer.removeFirst(bodyStart + length)
        return (status, body)
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = recv(fd, &chunk, chunk.count, 0)
        guard count > 0 else { throw BenchError(count == 0 ? "the server closed the connection" : "recv: errno \(errno)") }
        buffer += chunk[..<count]
    }

    private func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i..<(i + needle.count)]) == needle { return i }
        }
        return nil
    }
}

/// Runs `connections` threads, each with its own keep-alive connection, each calling
/// `request(connection, client, n)` for n = 0, 1, … until `seconds` passed or `limit` calls;
/// returns how many calls were made, their latencies in milliseconds, and the first failure.
enum HTTPLoad {
    struct Result: Sendable {
        var calls: Int
        var seconds: Double
        var latencies: [Double]
        var failures: Int
        var firstFailure: String?

        var perSecond: Double { Double(calls) / seconds }
    }

    static func run(port: Int, connections: Int, seconds: Double, limit: Int = .max,
                    _ request: @escaping @Sendable (HTTPConnection, Int, Int) throws -> Void) -> Result {
        let results = LockedResults()
        let group = DispatchGroup()
        let start = Date()
        let deadline = start.addingTimeInterval(seconds)
        for client in 0..<connections {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                var latencies: [Double] = []
                var failure: String?
                do {
                    let connection = try HTTPConnection(port: port)
                    var n = 0
                    while Date() < deadline, n < limit {
                        let began = DispatchTime.now().uptimeNanoseconds
                        try request(connection, client, n)
                        latencies.append(Double(DispatchTime.now().uptimeNanoseconds - began) / 1e6)
                        n += 1
                    }
                } catch {
                    failure = "\(error)"
                }
                results.add(latencies, failure: failure)
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        return results.result(seconds: Date().timeIntervalSince(start))
    }
}

/// The load threads' latencies and failures, gathered under a lock.
final class LockedResults: @unchecked Sendable {
    // @unchecked: every access holds `lock`.
    private let lock = NSLock()
    private var latencies: [Double] = []
    private var failures = 0
    private var firstFailure: String?

    func add(_ values: [Double], failure: String?) {
        lock.lock()
        defer { lock.unlock() }
        latencies += values
        if let failure {
            failures += 1
            if firstFailure == nil { firstFailure = failure }
        }
    }

    func result(seconds: Double) -> HTTPLoad.Result {
        lock.lock()
        defer { lock.unlock() }
        return HTTPLoad.Result(calls: latencies.count, seconds: seconds, latencies: latencies,
                               failures: failures, firstFailure: firstFailure)
    }
}
