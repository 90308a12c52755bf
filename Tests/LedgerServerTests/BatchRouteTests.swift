import Foundation
import LedgerTestSupport
import Testing

extension LedgerServerTests {
    /// `POST /v1/batch`: an NDJSON body applied as `ledger ingest` applies a file.
    @Suite("ledger serve: NDJSON batch")
    struct BatchRouteTests {
        @Test func aBatchStreamsOneResultPerLineAsIngestPrintsThem() async throws {
            try await ServerHarness.with { server in
                let key = try server.key(.writer)
                let body = [
                    Fixture.purchaseLine(),
                    "",
                    Fixture.purchaseLine(["userId": "\"u2\""]),
                    #"{"type":"consume","userId":"u1","paymentSeq":"P-1","purchaseToken":"tok-1","time":"2026-01-01T00:05:00Z"}"#,
                    #"{"type":"consume","userId":"u1","paymentSeq":"P-1","purchaseToken":"tok-1"}"#,
                    "not json",
                ].joined(separator: "\n") + "\n"
                let reply = try await server.send("POST", "/v1/batch", key: key, body: body,
                                                  headers: ["Content-Type": "application/x-ndjson"])
                #expect(reply.status == 200)
                #expect(reply.header("Content-Type") == "application/x-ndjson")
                let lines = reply.text.split(separator: "\n").map(String.init)
                #expect(lines == [
                    #"{"line":1,"status":"recorded","paymentSeq":"P-1"}"#,
                    #"{"line":3,"status":"rejected","paymentSeq":"P-1","error":{"code":"USER_INVALID","message":"payment P-1 belongs to another user"}}"#,
                    #"{"line":4,"status":"consumed","paymentSeq":"P-1","consumedAt":"2026-01-01T00:05:00.000Z"}"#,
                    #"{"line":5,"status":"alreadyConsumed","paymentSeq":"P-1","consumedAt":"2026-01-01T00:05:00.000Z"}"#,
                ] + [lines.last ?? ""])
                #expect(lines.last?.hasPrefix(#"{"line":6,"status":"rejected","error":{"code":"INVALID_INPUT""#) == true)
            }
        }

        @Test func aBatchOfManyLinesIsCommittedInBatchesAndAnsweredInOrder() async throws {
            try await ServerHarness.with { server in
                let key = try server.key(.writer)
                let body = (1...450).map { i in
                    Fixture.purchaseLine(["paymentSeq": "\"P-\(i)\"", "transactionId": "\"T-\(i)\"", "purchaseToken": "\"tok-\(i)\""])
                }.joined(separator: "\n")
                let reply = try await server.send("POST", "/v1/batch", key: key, body: body)
                let lines = reply.text.split(separator: "\n")
                #expect(lines.count == 450)
                #expect(lines.allSatisfy { $0.contains(#""status":"recorded""#) })
                #expect(lines.last == #"{"line":450,"status":"recorded","paymentSeq":"P-450"}"#)
                #expect(try server.database.withConnection { try $0.count("SELECT count(*) FROM ledger.payments") } == 450)
            }
        }

        @Test func aReaderKeyCannotPostABatch() async throws {
            try await ServerHarness.with { server in
                let before = try server.snapshot()
                let reply = try await server.send("POST", "/v1/batch", key: try server.key(.reader), body: Fixture.purchaseLine())
                #expect(reply.status == 403)
                #expect(try server.snapshot() == before)
            }
        }
    }
}
