import Foundation
import Hummingbird
import LedgerJSON
import LedgerOutput
import PurchaseLedger

/// The ledger's calls to the stores (docs/contract.md §6.2) over HTTP: `GET /v1/jobs` for readers
/// (what `ledger jobs list --json` prints), `POST /v1/jobs/{id}/retry` for writers.
struct JobRoutes {
    let ledger: Ledger

    func addReads(to group: RouterGroup<LedgerRequestContext>) {
        group.get("jobs") { request, _ in
            let query = QueryParameters(request)
            var state: JobRecord.State?
            if let text = query.parameters.get("state") {
                guard let known = JobRecord.State(rawValue: text) else {
                    throw APIError.invalid("state", "expected pending, failed, done or waiting, got \"\(text.prefix(40))\"")
                }
                state = known
            }
            var limit = 100
            if let text = query.parameters.get("limit") {
                guard let number = Int(text), (1...1000).contains(number) else {
                    throw APIError.invalid("limit", "expected a whole number from 1 to 1000, got \"\(text.prefix(40))\"")
                }
                limit = number
            }
            let jobs = try await APIError.mappingDatabase { try await ledger.jobs(state: state, limit: limit) }
            var w = JSONWriter()
            w.beginArray()
            for job in jobs { job.write(into: &w) }
            w.endArray()
            return Response.json(w.string)
        }
    }

    func addWrites(to group: RouterGroup<LedgerRequestContext>) {
        group.post("jobs/{id}/retry") { _, context in
            let text = context.parameters.get("id") ?? ""
            guard let id = Int64(text), id > 0 else {
                throw APIError.invalid("id", "expected a job id (a positive whole number), got \"\(text.prefix(40))\"")
            }
            let state = try await APIError.mappingDatabase { try await ledger.retryJob(id: id) }
            switch state {
            case nil:
                throw APIError(.notFound, LedgerError.Code.notFound.rawValue, "no job \(id)")
            case .pending?:
                return Response.json(#"{"id":\#(id),"state":"pending"}"#)
            case let other?:
                throw APIError(.conflict, "JOB_NOT_FAILED", "job \(id) is \(other.rawValue), not failed: only a failed job is retried")
            }
        }
    }
}
