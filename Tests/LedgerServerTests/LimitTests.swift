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

        private static func blockingIdleProbe(port: Int) throws -> (String, Double) {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw TestSetupError("socket failed") }
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { throw TestSetupError("connect failed") }
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
