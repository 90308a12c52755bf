import Dispatch
import Foundation
import LedgerTestSupport
import Testing

extension LedgerServerTests {
    /// The concurrency limit and the idle timeout.
    @Suite("ledger serve: limits")
    struct LimitTests {
        @Test func aRequestOverTheConcurrencyLimitIs503AtOnceWhileHealthStillAnswers() async throws {
            try await ServerHarness.with({ $0.maxConcurrentRequests = 1 }, poolSize: 1) { server in
                let reader = try server.key(.reader)
                // Hold the pool's only connection, so the first request waits for it inside the server.
                let holder = Task { try await server.ledger.pool.withConnection { _ = try $0.query("SELECT pg_sleep(4)") } }
                for _ in 0..<200 where server.ledger.pool.statistics.inUse == 0 { try await Task.sleep(for: .milliseconds(20)) }
                let waiting = Task { try await server.send("GET", "/v1/users/u1/unconsumed", key: reader).status }
                for _ in 0..<200 where server.ledger.pool.statistics.waiting == 0 { try await Task.sleep(for: .milliseconds(20)) }
                #expect(server.ledger.pool.statistics.waiting == 1)
                let refused = try await server.send("GET", "/v1/users/u1/unconsumed", key: reader)
                #expect(refused.status == 503 && refused.code == "OVERLOADED")
                #expect(refused.header("Retry-After") == "1")
                // Answered while the first request still waits: refused at once, not queued.
                #expect(server.ledger.pool.statistics.waiting == 1)
                #expect(try await server.send("GET", "/healthz").status == 200)
                try await holder.value
                #expect(try await waiting.value == 200)
            }
        }

        /// A slow-headers client (Slowloris) keeps sending header lines and never ends the head:
        /// the idle timeout counts from the last complete request part, so header bytes alone do
        /// not keep the connection, and it is closed without an answer.
        @Test func aRequestHeadSentByteByByteIsCutOffAfterTheIdleTimeout() async throws {
            try await ServerHarness.with({ $0.idleTimeout = .seconds(1) }) { server in
                let (received, closedAfter) = try await RawSocket.slowHeadersProbe(port: server.port)
                #expect(received.isEmpty)
                #expect(closedAfter < 3.0)
            }
        }

        @Test func anIdleConnectionIsClosedAfterTheIdleTimeout() async throws {
            try await ServerHarness.with({ $0.idleTimeout = .seconds(1) }) { server in
                let (answered, closedAfter) = try await RawSocket.idleProbe(port: server.port)
                #expect(answered.hasPrefix("HTTP/1.1 200"))
                #expect(closedAfter < 3.0)
            }
        }
    }

    /// A bare TCP connection, to see what the server does to a connection nobody uses.
    enum RawSocket {
        /// Sends one keep-alive request, reads its answer, then waits without sending anything;
        /// returns the answer's first line and how many seconds passed until the server closed.
        static func idleProbe(port: Int) async throws -> (String, Double) {
            try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async {
                    continuation.resume(with: Result { try blockingIdleProbe(port: port) })
                }
            }
        }

        /// Sends a request line, then one header line every 200 ms without ever ending the head;
        /// returns what the server sent and how many seconds passed until it closed (gives up,
        /// throwing, after 10 s).
        static func slowHeadersProbe(port: Int) async throws -> (String, Double) {
            try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async {
                    continuation.resume(with: Result { try blockingSlowHeadersProbe(port: port) })
                }
            }
        }

        private static func blockingSlowHeadersProbe(port: Int) throws -> (String, Double) {
            let fd = try connected(port: port)
            defer { close(fd) }
            var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let start = Date()
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            var line = Array("GET /healthz HTTP/1.1\r\nHost: localhost\r\n".utf8)
            var sent = 0
            while Date().timeIntervalSince(start) < 10 {
                _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                sent += 1
                line = Array("X-Slow-\(sent): 1\r\n".utf8)
                let count = recv(fd, &buffer, buffer.count, 0)
                if count == 0 { return (String(decoding: received, as: UTF8.self), Date().timeIntervalSince(start)) }
                if count > 0 { received += buffer[..<count] }
                if count < 0, errno != EAGAIN, errno != EWOULDBLOCK {
                    return (String(decoding: received, as: UTF8.self), Date().timeIntervalSince(start))   // reset
                }
            }
            throw TestSetupError("the connection stayed open for 10 s of slow headers")
        }

        private static func connected(port: Int) throws -> Int32 {
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
                throw TestSetupError("connect failed")
            }
            return fd
        }

        private static func blockingIdleProbe(port: Int) throws -> (String, Double) {
            let fd = try connected(port: port)
            defer { close(fd) }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let request = Array("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)
            _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { throw TestSetupError("no answer") }
            let answer = String(decoding: buffer[..<count], as: UTF8.self)
            let start = Date()
            while true {
                let more = recv(fd, &buffer, buffer.count, 0)
                if more == 0 { return (answer, Date().timeIntervalSince(start)) }   // the server closed it
                if more < 0 { throw TestSetupError("the connection stayed open (recv: \(errno))") }
            }
        }
    }
}
