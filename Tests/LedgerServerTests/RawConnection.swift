import Dispatch
import Foundation
import LedgerTestSupport

/// A bare TCP connection to the server, for what URLSession will not send: bytes one at a time,
/// a head that never ends, a malformed request, a body in halves. Blocking calls run on a
/// dispatch thread, never on Swift's cooperative pool.
final class RawConnection: @unchecked Sendable {
    // @unchecked: the descriptor is only used by one test at a time, and `received` only under `lock`.
    let fd: Int32
    private let lock = NSLock()
    private var received: [UInt8] = []

    private init(fd: Int32) {
        self.fd = fd
    }

    deinit { close(fd) }

    /// Connects to 127.0.0.1:`port`.
    static func open(port: Int) throws -> RawConnection {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSetupError("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw TestSetupError("connect failed: \(errno)")
        }
        return RawConnection(fd: fd)
    }

    /// Sends every byte (blocking while the server does not read); false when the server closed.
    @discardableResult
    func sendAll(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }

    @discardableResult
    func sendAll(_ text: String) -> Bool { sendAll(Array(text.utf8)) }

    /// `sendAll` on a dispatch thread.
    func send(_ bytes: [UInt8]) async -> Bool {
        await Self.blocking { self.sendAll(bytes) }
    }

    func send(_ text: String) async -> Bool { await send(Array(text.utf8)) }

    /// Reads what has arrived without waiting; true when the server has closed the connection.
    func poll() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 {
                lock.withLock { received += buffer[..<count] }
                continue
            }
            if count == 0 { return true }
            if errno == EINTR { continue }
            return errno != EAGAIN && errno != EWOULDBLOCK   // a reset counts as closed
        }
    }

    /// Everything received so far.
    var text: String { lock.withLock { String(decoding: received, as: UTF8.self) } }

    /// Reads until the server closes the connection or `timeout` seconds pass; returns whether it
    /// closed and after how many seconds.
    func waitForClose(timeout: Double) async -> (closed: Bool, after: Double) {
        await Self.blocking {
            let start = Date()
            repeat {
                if self.poll() { return (true, Date().timeIntervalSince(start)) }
                var descriptor = pollfd(fd: self.fd, events: Int16(POLLIN), revents: 0)
                _ = Glibc.poll(&descriptor, 1, 50)
            } while Date().timeIntervalSince(start) < timeout
            return (false, timeout)
        }
    }

    /// Reads until one whole response (head and a `Content-Length` body) has arrived, or the
    /// connection closed, or `timeout` seconds passed; returns it parsed.
    func response(timeout: Double = 30) async throws -> RawResponse {
        try await Self.blocking {
            let start = Date()
            while true {
                let closed = self.poll()
                if let response = RawResponse(self.text) { return response }
                if closed || Date().timeIntervalSince(start) > timeout {
                    throw TestSetupError("no whole response (closed: \(closed)); got: \(self.text.prefix(200))")
                }
                var descriptor = pollfd(fd: self.fd, events: Int16(POLLIN), revents: 0)
                _ = Glibc.poll(&descriptor, 1, 50)
            }
        }
    }

    /// Forgets what was received, to read the next response.
    func clear() {
        lock.withLock { received = [] }
    }

    static func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
        }
    }

    static func blocking<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }
}

/// One HTTP/1.1 response as read off a raw connection.
struct RawResponse: Sendable {
    let status: Int
    /// Header values by lower-case name.
    let headers: [String: String]
    let body: String

    /// Parses the first response in `text`; nil until its head and its `Content-Length` body are complete.
    init?(_ text: String) {
        guard let split = text.range(of: "\r\n\r\n") else { return nil }
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let statusLine = lines[0].split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let rest = Array(text[split.upperBound...].utf8)
        self.status = status
        self.headers = headers
        if headers["transfer-encoding"] == "chunked" {
            guard let body = Self.dechunked(rest) else { return nil }
            self.body = String(decoding: body, as: UTF8.self)
        } else {
            let length = headers["content-length"].flatMap { Int($0) } ?? 0
            guard rest.count >= length else { return nil }
            self.body = String(decoding: rest[..<length], as: UTF8.self)
        }
    }

    /// The body of a chunked message, or nil until its last chunk has arrived.
    private static func dechunked(_ bytes: [UInt8]) -> [UInt8]? {
        var body: [UInt8] = []
        var offset = 0
        while true {
            guard let end = bytes[offset...].firstIndex(of: UInt8(ascii: "\n")), end > offset else { return nil }
            let sizeText = String(decoding: bytes[offset..<end], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let size = Int(sizeText, radix: 16) else { return nil }
            offset = end + 1
            if size == 0 { return body }
            guard bytes.count >= offset + size + 2 else { return nil }
            body += bytes[offset..<(offset + size)]
            offset += size + 2
        }
    }

    /// The lines of an NDJSON body.
    var lines: [String] { body.split(separator: "\n").map(String.init) }

    /// The body as a JSON object.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]) ?? [:]
    }
}
