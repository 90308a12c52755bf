import LedgerJSON
import Foundation
import Hummingbird
import LedgerOutput
import Postgres
import PurchaseLedger

/// `POST /v1/batch` (role `writer`): an NDJSON body applied exactly as `ledger ingest` applies a
/// file, on one pooled connection, in pipelined transactions of `batchSize` lines. The answer
/// streams one result line per input line (`{"line":1,"status":"recorded",…}`), each sent only
/// after its transaction committed. 503 when no connection can be had before anything ran; a
/// database failure later ends the stream with `{"error":{"code":"UNAVAILABLE",…}}`, and the
/// lines without a result line may or may not have applied (send them again: every command but
/// consume is idempotent; see the README on consumes).
struct BatchRoute {
    let ledger: Ledger
    let metrics: ServerMetrics
    let maxBodyBytes: Int
    var batchSize = 200

    func add(to group: RouterGroup<LedgerRequestContext>) {
        group.post("batch") { request, _ in
            var request = request
            let body = try await request.bytes(upTo: maxBodyBytes)
            return try await run(body)
        }
    }

    private func run(_ body: [UInt8]) async throws -> Response {
        let (results, output) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .unbounded)
        let (started, start) = AsyncStream.makeStream(of: Result<Void, PostgresError>.self)
        let (ledger, metrics, stores, batchSize) = (self.ledger, self.metrics, ledger.stores, self.batchSize)
        Task {
            do {
                try await ledger.pool.withConnection { connection in
                    start.yield(.success(()))
                    start.finish()
                    var handed = false
                    var ingestor = Ingestor(batchSize: batchSize, stores: stores) {
                        guard !handed else { throw BatchConnectionLost() }
                        handed = true
                        return connection
                    }
                    var lines = BufferLines(body)
                    var chunk = ""
                    _ = try ingestor.run(&lines, report: { result in
                        metrics.outcome(result.outcome)
                        chunk += result.json
                        chunk += "\n"
                    }, flush: {
                        output.yield(ByteBuffer(string: chunk))
                        chunk = ""
                    })
                }
            } catch let error as PostgresError {
                start.yield(.failure(error))
                start.finish()
                output.yield(ByteBuffer(string: Self.errorLine(APIError.database(error))))
            } catch {
                output.yield(ByteBuffer(string: Self.errorLine(
                    APIError(.serviceUnavailable, "UNAVAILABLE", "the database connection was lost; send the lines without a result again"))))
            }
            start.finish()
            output.finish()
        }
        for await first in started {
            if case .failure(let error) = first { throw APIError.database(error) }
            break
        }
        return Response(status: .ok, headers: [.contentType: "application/x-ndjson"],
                        body: ResponseBody(asyncSequence: results))
    }

    private static func errorLine(_ error: APIError) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.key("error")
        w.beginObject()
        w.field("code", error.code)
        w.field("message", error.message)
        w.endObject()
        w.endObject()
        return w.string + "\n"
    }
}

/// The ingestor asked for a second connection: the pooled one was lost mid-batch.
struct BatchConnectionLost: Error {}

/// The lines of a request body held in memory, as `ledger ingest` reads a file: numbered from 1,
/// blank ones included, a line over 4 MiB reported as too long.
struct BufferLines: LineSource {
    private let bytes: [UInt8]
    private var offset = 0
    private(set) var lineNumber = 0
    private let maxLineBytes = 4 << 20

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var hasBufferedLine: Bool { offset < bytes.count }

    mutating func next() throws -> LineReader.Line? {
        guard offset < bytes.count else { return nil }
        let end = bytes[offset...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
        var line = bytes[offset..<end]
        offset = end + 1
        lineNumber += 1
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        return line.count > maxLineBytes ? .tooLong(line.count) : .text(line)
    }
}
