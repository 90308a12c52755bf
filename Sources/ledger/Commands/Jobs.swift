import ArgumentParser
import Foundation
import LedgerJSON
import LedgerOutput
import PurchaseLedger
import StoreAPIs

/// `ledger jobs`: the ledger's calls to the stores (docs/contract.md §6.2).
struct Jobs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The ledger's calls to the stores: run them, list them, retry a failed one.",
        subcommands: [Run.self, List.self, Retry.self])

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the jobs that are due (those of the stores whose API is configured).",
            discussion: "Exit status: 0, or 1 when a job failed for good during the run; 2 for a usage error or an unreachable database.")

        @Flag(help: "Keep running until no job is pending (waiting out retry delays), or until --timeout.")
        var untilIdle = false

        @Option(help: "With --until-idle: stop after this many seconds, leaving the rest for later.")
        var timeout: Int = 60

        @Option(help: "Jobs run at once.")
        var concurrency: Int = 4

        @Flag(help: "Print a JSON array of the jobs run.")
        var json = false

        @OptionGroup var options: StoreAPIOptions

        func validate() throws {
            guard timeout >= 1 else { throw ValidationError("--timeout must be at least 1 second") }
            guard concurrency >= 1 else { throw ValidationError("--concurrency must be at least 1") }
        }

        func run() async throws {
            let runs = try await options.withStores { ledger, api, http in
                var settings = JobRunner.Options()
                settings.concurrency = concurrency
                let runner = JobRunner(ledger: ledger, stores: api, http: http, options: settings, logger: LedgerLog.logger)
                if runner.kinds.isEmpty {
                    FileHandle.standardError.write(Data("ledger: no store API is configured (LEDGER_GOOGLE_SERVICE_ACCOUNT_FILE; LEDGER_APPLE_API_KEY_FILE with LEDGER_APPLE_CONSUMPTION_ANSWERS=on), so no job can run\n".utf8))
                }
                return untilIdle ? try await runner.runUntilIdle(timeout: .seconds(timeout)) : try await runner.runDue()
            }
            if json {
                var w = JSONWriter()
                w.beginArray()
                for run in runs { run.write(into: &w) }
                w.endArray()
                print(w.string)
            } else {
                for run in runs {
                    print("job \(run.id) \(run.kind) attempt \(run.attempt): \(run.result.rawValue)"
                          + (run.outcome.map { " \($0)" } ?? "") + (run.paymentSeq.map { " \($0)" } ?? "")
                          + (run.error.map { " (\($0))" } ?? ""))
                }
            }
            if runs.contains(where: { $0.result == .failed }) { throw ExitCode(1) }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The jobs, newest first (never their purchase tokens).")

        @OptionGroup var list: JobListOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let jobs = try await database.withLedger { try await $0.jobs(state: list.selected, limit: list.limit) }
            if list.json {
                list.printJSON(jobs)
            } else {
                print(Table(["id", "kind", "state", "attempts", "next or last run (UTC)", "outcome", "last error"],
                            jobs.map { job in
                                [String(job.id), job.kind, job.state.rawValue, String(job.attempts),
                                 (job.finishedAt ?? job.runAfter).ledgerText, job.outcome ?? "",
                                 job.lastError.map { String($0.prefix(80)) } ?? ""]
                            }).render(empty: "no jobs"))
            }
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run a job that failed for good again.")

        @Argument(help: "The job's id (ledger jobs list).")
        var id: Int64

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let state = try await database.withLedger { try await $0.retryJob(id: id) }
            switch state {
            case nil:
                Terminal.fail("ledger: no job \(id)", status: 1)
            case .pending?:
                print("job \(id) is pending: it runs at the next `ledger jobs run` or in `ledger serve`")
            case let other?:
                Terminal.fail("ledger: job \(id) is \(other.rawValue), not failed", status: 1)
            }
        }
    }
}

extension JobRunner.Run {
    func write(into w: inout JSONWriter) {
        w.beginObject()
        w.field("id", Int(id))
        w.field("kind", kind)
        w.field("attempt", attempt)
        w.field("result", result.rawValue)
        if let outcome { w.field("outcome", outcome) }
        if let paymentSeq { w.field("paymentSeq", paymentSeq) }
        if let error { w.field("error", error) }
        w.endObject()
    }
}
