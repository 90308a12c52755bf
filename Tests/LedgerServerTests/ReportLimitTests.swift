import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LedgerTestSupport
import Postgres
import Testing

extension LedgerServerTests {
    /// A reader cannot hold the database with reports: a range over the limits is refused before
    /// the database is asked, a report past the report timeout is stopped and answered 504, a
    /// client that hangs up stops its report on the database, and reports leave part of the pool
    /// to commands. The reports are made to wait on a lock (``ReportBlocker``), as behind a
    /// rebuild, so each test is about where the time goes, not about how fast the machine is.
    @Suite("ledger serve: reports cannot hold the database")
    struct ReportLimitTests {
        static let subscribers = "/v1/analytics/subscribers?from=2026-01-01&to=2026-02-01"

        @Test func aRangeOverTheLimitsIs400NamingTheParameterAndRunsNothing() async throws {
            try await ServerHarness.with { server in
                let reader = try server.key(.reader)
                let blocker = try ReportBlocker(server.database)
                defer { blocker.release() }
                // A report that ran would wait on the lock: each answer comes at once, and nothing waits.
                let refused: [(String, String, String)] = [
                    ("/v1/analytics/subscribers?from=0001-01-01&to=9999-12-31", "to", "by month"),
                    ("/v1/analytics/subscribers?from=0001-01-01&to=9999-12-31&by=month", "to", "shorter range"),
                    ("/v1/analytics/churn?from=2020-01-01&to=2023-01-02", "to", "at most 1096 days"),
                    ("/v1/analytics/revenue?from=1900-01-01&to=2000-01-02&by=month", "to", "at most 1200 months"),
                ]
                for (uri, field, words) in refused {
                    let reply = try await HTTP.send("GET", "http://127.0.0.1:\(server.port)\(uri)", key: reader, timeout: 30)
                    #expect(reply.status == 400 && reply.code == "INVALID_INPUT", "\(uri): \(reply.text)")
                    #expect(reply.message.hasPrefix("\(field): ") && reply.message.contains(words), "\(reply.message)")
                }
                #expect(try blocker.reportsRunning() == 0)
                // Just within the limits: three years of days, a century of months.
                blocker.release()
                #expect(try await server.send("GET", "/v1/analytics/churn?from=2020-01-01&to=2023-01-01", key: reader).status == 200)
                #expect(try await server.send("GET", "/v1/analytics/subscribers?from=1950-01-01&to=2050-01-01&by=month",
                                              key: reader).status == 200)
            }
        }

        /// `ledger serve` as operators start it, with `LEDGER_REPORT_TIMEOUT=1`.
        @Test func aReportPastTheReportTimeoutIs504AndIsStoppedOnTheDatabase() async throws {
            try await TestDatabase.with { db in
                let reader = try db.withConnection { try $0.addAPIKey(role: .reader).key }
                let serve = try LedgerProcess.start(["serve", "--port", "0", "--database-url", db.conninfo],
                                                    environment: ["LEDGER_REPORT_TIMEOUT": "1"])
                defer { serve.kill() }
                #expect(serve.waitForOutput(timeout: 30) { $0.contains { $0.hasPrefix("listening on http://127.0.0.1:") } })
                let port = try #require(serve.linesSoFar.first.flatMap { Int($0.split(separator: ":").last ?? "") })
                let blocker = try ReportBlocker(db)
                defer { blocker.release() }
                let start = Date()
                let reply = try await HTTP.send("GET", "http://127.0.0.1:\(port)\(Self.subscribers)", key: reader, timeout: 60)
                #expect(reply.status == 504 && reply.code == "TIMEOUT", "\(reply.text)")
                #expect(reply.message.contains("report timeout (1 s)") && reply.message.contains("shorter range"))
                #expect(Date().timeIntervalSince(start) < 30)
                // Stopped on the database, not only answered: nothing of it still waits on the lock.
                #expect(try blocker.reportsRunning() == 0)
            }
        }

        @Test func aBadReportTimeoutStopsServeNamingIt() throws {
            let out = try LedgerProcess.run(["serve", "--report-timeout", "-1", "--database-url", "host=/nonexistent"])
            #expect(out.status == 2)
            #expect(out.stderr.contains("LEDGER_REPORT_TIMEOUT"))
        }

        @Test(arguments: [["--job-concurrency", "257"], ["--job-concurrency", "-1"]])
        func aBadJobConcurrencyStopsServeNamingIt(arguments: [String]) throws {
            let out = try LedgerProcess.run(["serve"] + arguments + ["--database-url", "host=/nonexistent"])
            #expect(out.status == 2)
            #expect(out.stderr.contains("LEDGER_JOB_CONCURRENCY"))
        }

        @Test func aClientThatHangsUpStopsItsReportOnTheDatabase() async throws {
            try await ServerHarness.with { server in
                let reader = try server.key(.reader)
                let blocker = try ReportBlocker(server.database)
                defer { blocker.release() }
                let client = try RawClient(port: server.port)
                try client.send("GET \(Self.subscribers) HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(reader)\r\n\r\n")
                #expect(try await blocker.wait(timeout: 60) { $0 == 1 })
                client.close()
                // Cancelled, while the lock still stands (the report would wait on it for ever).
                #expect(try await blocker.wait(timeout: 15) { $0 == 0 })
                // The pool's connections came back usable.
                blocker.release()
                for _ in 0..<5 { #expect(try await server.send("GET", Self.subscribers, key: reader).status == 200) }
            }
        }

        /// Two reports in flight may not take both connections of a pool of two: a purchase made
        /// while they wait is answered before either report ends.
        @Test func withAPoolOfTwoAPurchaseIsAnsweredWhileTwoReportsWait() async throws {
            try await ServerHarness.with(poolSize: 2) { server in
                let reader = try server.key(.reader)
                let writer = try server.key(.writer)
                let blocker = try ReportBlocker(server.database)
                defer { blocker.release() }
                let reports = (0..<2).map { _ in
                    Task {
                        let status = try await server.send("GET", Self.subscribers, key: reader).status
                        return (status, Date())
                    }
                }
                #expect(try await blocker.wait(timeout: 60) { $0 >= 1 })
                try await Task.sleep(for: .seconds(1))  // the second report reaches the server too
                let purchase = try await HTTP.send("POST", "http://127.0.0.1:\(server.port)/v1/purchases", key: writer,
                                                   body: Fixture.purchaseLine(["type": nil]), timeout: 60)
                let purchased = Date()
                #expect(purchase.status == 200, "\(purchase.text)")
                #expect(try blocker.reportsRunning() >= 1)
                blocker.release()
                for report in reports {
                    let (status, ended) = try await report.value
                    #expect(status == 200)
                    #expect(ended > purchased)
                }
            }
        }
    }

    /// A bare TCP client, to hang up in the middle of a request.
    final class RawClient {
        private var fd: Int32

        init(port: Int) throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw TestSetupError("socket failed") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                Glibc.close(fd)
                throw TestSetupError("connect failed")
            }
        }

        deinit { close() }

        func send(_ text: String) throws {
            let bytes = Array(text.utf8)
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent == bytes.count else { throw TestSetupError("send failed") }
        }

        /// Closes the socket, as a client that gave up does.
        func close() {
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
    }
}
