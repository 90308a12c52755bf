import Foundation
import LedgerTestSupport
import Testing

/// Values that, let through to the database, would fail the whole batch and stop `ledger ingest`
/// with exit 2 (found by the hostile-input corpus), or be echoed back at length. Each is refused
/// on its own line, and the line after it still applies.
@Suite("Hostile values are refused on their own line")
struct HostileValueTests {
    static let longType = String(repeating: "X", count: 5000)

    @Test(arguments: [
        // libpq cannot send U+0000 in a text parameter.
        (#"{"type":"refund","paymentSeq":"P-0","reason":"a\u0000b"}"#, "INVALID_INPUT", "reason"),
        // Epoch milliseconds before the year 1: outside what the ledger stores.
        (#"{"type":"consume","userId":"u1","paymentSeq":"P-0","purchaseToken":"t","time":-253402300799999}"#, "INVALID_INPUT", "time"),
        (#"{"type":"cancel","storeCode":"AS","originalTransactionId":"L","time":-62135596800001}"#, "INVALID_INPUT", "time"),
        (ContractLines.purchase("P-9").replacingOccurrences(of: #""purchaseTime":"2026-01-01T00:00:00Z""#,
                                                            with: #""purchaseTime":-62135596800001"#), "INVALID_INPUT", "purchaseTime"),
        // A long unknown value is named, not echoed in full.
        (ContractLines.purchase("P-9").replacingOccurrences(of: #""CONSUMABLE""#, with: "\"\(longType)\""),
         "UNKNOWN_PRODUCT_TYPE", "productType"),
    ])
    func aHostileValueIsRefusedAndTheLineAfterItApplies(line: String, code: String, field: String) async throws {
        try await TestDatabase.with { db in
            let out = try LedgerProcess.run(["ingest", "--database-url", db.conninfo],
                                            input: ContractLines.file([line, ContractLines.purchase("P-1")]))
            #expect(out.status == 1, "\(out.stderr)")
            let results = try IngestResult.all(out.lines)
            #expect(results.map(\.status) == ["rejected", "recorded"])
            #expect(results.first?.code == code)
            #expect(results.first?.message?.contains(field) == true, "\(results.first?.message ?? "")")
            #expect((results.first?.message?.utf8.count ?? 0) < 300)
            try db.withConnection { c throws in
                #expect(try c.count("SELECT count(*) FROM ledger.events") == 1)
            }
        }
    }
}
