import CLibPQ
import Foundation

extension Connection {
    /// Runs statements in libpq's pipeline mode: one round trip for all of them.
    ///
    /// `PQenterPipelineMode`, `PQsendQueryParams` per statement, one `PQpipelineSync`, then every result is
    /// read before `PQexitPipelineMode`. The connection is non-blocking meanwhile (`PQsetnonblocking`) and a
    /// `poll` loop on `PQsocket` interleaves `PQflush` with `PQconsumeInput`, so neither side can stall the
    /// other however large the pipeline is.
    ///
    /// The statements run as one implicit transaction unless they contain their own `BEGIN`/`COMMIT`: when one
    /// fails, its result is its error, each later statement's result is a `.server` error "skipped: an earlier
    /// statement in the pipeline failed" (with no SQLSTATE), and nothing of the implicit transaction remains.
    /// Every statement is checked before anything is sent: an encoding error throws and sends nothing.
    /// Statements are prepared on the server the first time their text runs on this connection
    /// (before the pipeline starts) and sent by name (`PQsendQueryPrepared`).
    /// A lost connection throws `.connectionBroken`.
    public func pipeline(_ statements: [SQL]) throws -> [Result<Rows, PostgresError>] {
        let handle = try usableHandle()
        let bound = try statements.map(BoundStatement.init)
        guard !bound.isEmpty else { return [] }
        let names = try bound.map { try preparedName($0, handle) }
        guard PQenterPipelineMode(handle) == 1 else { throw failure(handle, fallback: "cannot enter pipeline mode") }
        guard PQsetnonblocking(handle, 1) == 0 else {
            _ = PQexitPipelineMode(handle)
            throw failure(handle, fallback: "cannot enter non-blocking mode")
        }
        do {
            let results = try runPipeline(bound, names, handle)
            if results.contains(where: { if case .failure(let e) = $0 { e.isStalePreparedStatement } else { false } }) {
                preparedStatements.removeAll()  // prepared again on the next run
            }
            if PQsetnonblocking(handle, 0) != 0 || PQexitPipelineMode(handle) != 1 { markedBroken = true }
            return results
        } catch {
            markedBroken = true  // the protocol state is unknown; the connection cannot be reused
            throw error
        }
    }

    private func runPipeline(_ statements: [BoundStatement], _ names: [String?],
                             _ handle: OpaquePointer) throws -> [Result<Rows, PostgresError>] {
        var results: [Result<Rows, PostgresError>] = []
        results.reserveCapacity(statements.count)
        var sent = 0
        var synced = false
        var flushPending = false
        var resultEndPending = false  // PQgetResult returns NULL once after each statement's result
        while true {
            while sent < statements.count && !flushPending {
                let queued = if let name = names[sent] {
                    statements[sent].sendPrepared(name, on: handle)
                } else {
                    statements[sent].send(on: handle)
                }
                guard queued else { throw failure(handle, fallback: "could not queue a statement") }
                sent += 1
                flushPending = try flush(handle)
            }
            if sent == statements.count && !synced {
                guard PQpipelineSync(handle) == 1 else { throw failure(handle, fallback: "could not send the pipeline sync") }
                synced = true
                flushPending = try flush(handle)
            }
            guard PQconsumeInput(handle) == 1 else { throw failure(handle, fallback: "could not read from the server") }
            while PQisBusy(handle) == 0 {
                guard let result = PQgetResult(handle) else {
                    if resultEndPending {
                        resultEndPending = false
                        continue
                    }
                    break
                }
                defer { PQclear(result) }
                let status = PQresultStatus(result)
                if status == PGRES_PIPELINE_SYNC {
                    guard results.count == statements.count else {
                        throw PostgresError.client("pipeline returned \(results.count) results for \(statements.count) statements")
                    }
                    return results
                }
                results.append(outcome(of: result, status))
                resultEndPending = true
            }
            if sent < statements.count && !flushPending { continue }  // more to send before waiting
            try waitForSocket(handle, writable: flushPending)
            if flushPending { flushPending = try flush(handle) }
        }
    }

    /// `PQflush`: true while output is still queued because the socket is full.
    private func flush(_ handle: OpaquePointer) throws -> Bool {
        switch PQflush(handle) {
        case 0: return false
        case 1: return true
        default: throw failure(handle, fallback: "could not send to the server")
        }
    }

    /// `poll` on `PQsocket` until it is readable (or writable, when output is pending).
    private func waitForSocket(_ handle: OpaquePointer, writable: Bool) throws {
        let socket = PQsocket(handle)
        guard socket >= 0 else { throw failure(handle, fallback: "the connection has no socket") }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN) | (writable ? Int16(POLLOUT) : 0), revents: 0)
        while poll(&descriptor, 1, -1) < 0 {
            guard errno == EINTR else {
                throw PostgresError(kind: .connectionBroken, message: "poll failed: \(String(cString: strerror(errno)))")
            }
        }
    }
}
