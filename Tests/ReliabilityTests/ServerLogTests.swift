import Foundation
import LedgerTestSupport
import Testing

extension HeavyReliabilityTests {
    @Suite("Secrets in the server's log")
    struct ServerLog {
        /// Even a server that logs every statement with its parameters never sees a purchase
        /// token: the ledger hashes it before it leaves the process.
        @Test func purchaseTokensNeverReachTheServerLog() async throws {
            let secrets = SecretTests.TokenLines()
            try await PrivateCluster.with(settings: [
                "log_statement = 'all'", "log_parameter_max_length = -1", "log_parameter_max_length_on_error = -1",
                "log_min_error_statement = info", "log_min_messages = info",
            ]) { cluster in
                let out = try LedgerProcess.run(["ingest", "--database-url", cluster.conninfo],
                                                input: ContractLines.file(secrets.lines))
                #expect(out.status == 1, "\(out.stderr)")
                #expect(try IngestResult.all(out.lines).count == secrets.lines.count)
                let log = cluster.log
                // The log did record the statements and their parameters.
                #expect(log.contains("ledger.consume") && log.contains("ledger.record_payment") && log.contains("P-1"))
                #expect(secrets.leaks(in: log).isEmpty, "the server log holds a token")
            }
        }
    }
}
