import LedgerJSON
import Foundation
import Hummingbird
import LedgerOutput
import NIOCore
import NIOHTTP1
import Postgres
import PurchaseLedger

/// `POST /v1/batch` (role `writer`): an NDJSON body applied exactly as `ledger ingest` applies a
/// file (``Ledger/withIngestor(batchSize:_:)``), on one pooled connection, in transactions of `batchSize` lines. The body is
/// read as it arrives: lines are applied batch by batch while the rest is still coming (the
/// server holds the unfinished line, a batch and about `bodyBufferBytes` of what follows, never
/// the body). The answer streams one result line per input line (`{"line":1,"status":"recorded",…}`),
/// each sent only after its transaction committed.
///
/// 413 before anything runs when `Content-Length` is over the limit, 503 when no connection can
/// be had. Later failures end the stream with `{"error":{"code",…}}`: `UNAVAILABLE` when the
/// database was lost (the lines without a result line may or may not have applied: send them
/// again; every command but consume is idempotent, see the README on consumes);
/// `PAYLOAD_TOO_LARGE` when a body without `Content-Length` grew past the limit, and
/// `REQUEST_TIMEOUT` or `INVALID_INPUT` when the body stopped arriving or could not be parsed (the
/// lines without a result line were not applied).
struct BatchRoute {
    let ledger: Ledger
    let metrics: ServerMetrics
    let maxBodyBytes: Int
    var batchSize = 200
    /// The body read ahead of the line being applied.
    static let bodyBufferBytes = 1 << 20

    func add(to group: RouterGroup<LedgerRequestContext>) {
        group.post("batch") { request, _ in
            if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maxBodyBytes {
                throw tooLarge
            }
            return try await run(request.body)
        }
    }

    private var tooLarge: APIError {
        APIError(.contentTooLarge, "PAYLOAD_TOO_LARGE", "the request body is over the limit of \(maxBodyBytes) bytes")
    }

    private func run(_ body: RequestBody) async throws -> Response {
        let pipe = BodyPipe(capacity: Self.bodyBufferBytes)
        let (results, output) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .unbounded)
        let (started, start) = AsyncStream.makeStream(of: Result<Void, PostgresError>.self)
        // Finished when the body is no longer read, so the answer ends only after that: the
        // server reads what is left of the body once the answer ended, and must not while the
        // feeding task still does.
        let (fed, feeding) = AsyncStream.makeStream(of: Never.self)
        let (ledger, metrics, batchSize) = (self.ledger, self.metrics, self.batchSize)
        Task {
            do {
                try await ledger.withIngestor(batchSize: batchSize) { ingestor in
                    start.yield(.success(()))
                    start.finish()
                    var lines = BodyLines(pipe)
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
            } catch let error as APIError {
                output.yield(ByteBuffer(string: Self.errorLine(error)))
            } catch {
                output.yield(ByteBuffer(string: Self.errorLine(
                    APIError(.serviceUnavailable, "UNAVAILABLE", "the database connection was lost; send the lines without a result again"))))
            }
            start.finish()
            pipe.close()
            for await _ in fed {}
            output.finish()
        }
        for await first in started {
            if case .failure(let error) = first {
                feeding.finish()
                throw APIError.database(error)
            }
            break
        }
        let (limit, tooLarge) = (maxBodyBytes, self.tooLarge)
        Task {
            await Self.feed(body, into: pipe, limit: limit, tooLarge: tooLarge)
            feeding.finish()
        }
        return Response(status: .ok, headers: [.contentType: "application/x-ndjson"],
                        body: ResponseBody(asyncSequence: results))
    }

    /// Reads the body into `pipe` as the pipe takes it. At `limit` bytes it stops reading and
    /// ends the pipe with `tooLarge` (the bytes within the limit are passed on, so the lines
    /// within it are applied); when the receiver is gone it reads on to the end, dropping what it
    /// reads, so the connection stays usable.
    private static func feed(_ body: RequestBody, into pipe: BodyPipe, limit: Int, tooLarge: APIError) async {
        var total = 0
        var receiving = true
        do {
            for try await chunk in body {
                let allowed = limit - total
                guard chunk.readableBytes <= allowed else {
                    if receiving, allowed > 0, let within = chunk.getSlice(at: chunk.readerIndex, length: allowed) {
                        _ = await pipe.send(within)
                    }
                    pipe.finish(throwing: tooLarge)
                    return
                }
                total += chunk.readableBytes
                if receiving { receiving = await pipe.send(chunk) }
            }
            pipe.finish()
        } catch let error as APIError {
            pipe.finish(throwing: error)
        } catch let error as HTTPParserError {
            pipe.finish(throwing: APIError(parserError: error))
        } catch {
            pipe.finish(throwing: APIError(.badRequest, LedgerError.Code.invalidInput.rawValue,
                                           "the request body could not be read to its end (\(type(of: error)))"))
        }
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

