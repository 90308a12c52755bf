import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

@Suite("ledger verify --signatures, as a process")
struct VerifySignaturesCommandTests {
    @Test func keptSignaturesHoldAgainstTheirRootAndFailAgainstAnother() async throws {
        let chain = TestAppleChain()
        let rootFile = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-root-\(UUID().uuidString).pem").path
        try chain.rootPEM.write(toFile: rootFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: rootFile) }
        let payload = #"{"notificationType":"TEST","notificationUUID":"t-1","version":"2.0","signedDate":1767225600000,"data":{"bundleId":"com.example.game","environment":"Production"}}"#
        let line = #"{"type":"appleNotification","signedPayload":"\#(chain.signNested(payload))"}"#
        try await TestDatabase.with { db in
            let ingest = try LedgerProcess.run(["ingest", "--apple-bundle-ids", "com.example.game", "--apple-root-certificates", rootFile,
                                                "--database-url", db.conninfo], input: line + "\n")
            #expect(ingest.status == 0 && ingest.stdout.contains("\"ignored\""), "\(ingest.stdout) \(ingest.stderr)")

            let holds = try LedgerProcess.run(["verify", "--signatures", "--apple-root-certificates", rootFile, "--database-url", db.conninfo])
            #expect(holds.status == 0, "\(holds.stderr)")
            #expect(holds.stdout == "the kept signatures hold: 1 App Store notifications verified again\n")
            #expect(holds.stderr.contains("verify signatures: 1 notifications"), "progress: \(holds.stderr)")

            // The built-in root (Apple's) did not sign the test chain.
            let fails = try LedgerProcess.run(["verify", "--signatures", "--quiet", "--database-url", db.conninfo])
            #expect(fails.status == 1 && fails.stderr.isEmpty, "\(fails.stderr)")
            #expect(fails.lines.first == "1 of 1 App Store notifications fail verification:")
            let row = try #require(fails.lines.first { $0.contains("t-1") })
            #expect(row.contains("SIGNATURE_INVALID: signedPayload"), "\(row)")
            let json = try LedgerProcess.run(["verify", "--signatures", "--json", "--quiet", "--database-url", db.conninfo])
            let array = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
            #expect(json.status == 1 && array.count == 1 && array.first?["notificationId"] as? String == "t-1")

            let both = try LedgerProcess.run(["verify", "--signatures", "--chain", "--database-url", db.conninfo])
            #expect(both.status == 2 && both.stderr.contains("--chain and --signatures are separate checks"), "\(both.status) \(both.stderr)")
        }
    }
}
