import Foundation
import LedgerTestSupport

/// One result line of `ledger ingest`, read with Foundation.
struct IngestResult {
    var line: Int
    var status: String
    var paymentSeq: String?
    var originalTransactionId: String?
    var code: String?
    var message: String?
    var consumedAt: String?
    var recorded: [String]

    init(_ text: String) throws {
        let object = try jsonObject(text)
        line = object["line"] as? Int ?? -1
        status = object["status"] as? String ?? "?"
        paymentSeq = object["paymentSeq"] as? String
        originalTransactionId = object["originalTransactionId"] as? String
        let error = object["error"] as? [String: Any]
        code = error?["code"] as? String
        message = error?["message"] as? String
        consumedAt = object["consumedAt"] as? String
        recorded = object["recorded"] as? [String] ?? []
    }

    /// Every result line of an ingest run.
    static func all(_ lines: [String]) throws -> [IngestResult] { try lines.map(IngestResult.init) }
}
