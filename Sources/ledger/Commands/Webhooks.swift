import ArgumentParser
import Foundation
import LedgerJSON
import LedgerOutput
import PurchaseLedger
import StoreAPIs

/// `ledger webhooks`: the endpoints that hear the ledger (README, "Webhooks"). `ledger serve`
/// delivers to them; `ledger webhooks run` does it from the command line.
struct Webhooks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Endpoints that receive every event of the log and every entitlement change, signed: add, list, remove, replay.",
        subcommands: [Add.self, List.self, Remove.self, Replay.self, Deliveries.self, Run.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an endpoint; prints its signing secret, once.",
            discussion: "It receives what is appended from now on (`ledger events --after` reads older events; `ledger webhooks replay` sends its own deliveries again). Types: "
                + WebhookEndpoint.eventTypes.joined(separator: ", ") + ".")

        @Option(help: "Where deliveries are POSTed (http:// or https://).")
        var url: String

        @Option(parsing: .upToNextOption, help: "Only these types (default: every type).")
        var events: [String] = []

        @Flag(help: "Print JSON: the endpoint and its secret.")
        var json = false

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let (endpoint, secret) = try await database.withLedger { ledger in
                try await Webhooks.naming(["url": "--url", "events": "--events"]) {
                    try await ledger.addWebhook(url: url, eventTypes: events.isEmpty ? nil : events)
                }
            }
            if json {
                var w = JSONWriter()
                w.beginObject()
                w.field("id", Int(endpoint.id))
                w.field("url", endpoint.url)
                w.field("secret", secret)
                w.endObject()
                print(w.string)
            } else {
                print("endpoint \(endpoint.id): \(endpoint.url), from after log cursor \(endpoint.cursor) on")
                print("signing secret (shown only now; keep it where the receiver reads it): \(secret)")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The endpoints and their deliveries (never a secret).")

        @Flag(help: "Print JSON.")
        var json = false

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let endpoints = try await database.withLedger { try await $0.webhooks() }
            if json {
                var w = JSONWriter()
                w.beginArray()
                for endpoint in endpoints { endpoint.write(into: &w) }
                w.endArray()
                print(w.string)
                return
            }
            print(Table(["id", "url", "types", "cursor", "delivered", "undelivered", "failed", "oldest undelivered (UTC)"],
                        endpoints.map { e in
                            [String(e.id), e.url, e.eventTypes?.joined(separator: " ") ?? "all", e.cursor.description,
                             String(e.delivered), String(e.undelivered), String(e.failed), e.oldestUndelivered?.ledgerText ?? ""]
                        }).render(empty: "no webhook endpoints"))
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop delivering to an endpoint (its undelivered deliveries are failed).")

        @Argument(help: "The endpoint's id (ledger webhooks list).")
        var id: Int64

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            guard try await database.withLedger({ try await $0.removeWebhook(id: id) }) else {
                Terminal.fail("ledger: no webhook endpoint \(id)", status: 1)
            }
            print("endpoint \(id) removed")
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send an endpoint's deliveries again from a log position on (failed ones included), in order.",
            discussion: "Each keeps its event id and body, so a receiver that stores ids takes each once. Events from before the endpoint was added were never its deliveries: `ledger events --after` reads the log from any position.")

        @Argument(help: "The endpoint's id (ledger webhooks list).")
        var id: Int64

        @Option(help: ArgumentHelp(
            "The first log position to send again (an event's `position`).",
            discussion: "On a cluster whose workers append, one position per node group to replay, joined by commas, as the event feed's cursor; a group not named is not replayed."))
        var from: String

        @OptionGroup var database: DatabaseOptions

        func validate() throws {
            let start: EventCursor
            do { start = try EventCursor(parsing: from, field: "--from") } catch { throw ValidationError(error.message) }
            guard !start.positions.isEmpty else { throw ValidationError("--from: expected a log position (1 or more), got \(from)") }
        }

        func run() async throws {
            let start = try EventCursor(parsing: from, field: "--from")
            guard let count = try await database.withLedger({ try await $0.replayWebhook(id: id, from: start) }) else {
                Terminal.fail("ledger: no webhook endpoint \(id)", status: 1)
            }
            print("endpoint \(id): \(count) deliveries queued again from position \(start)")
        }
    }

    struct Deliveries: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "An endpoint's deliveries, newest first (failed ones with why).")

        @Argument(help: "The endpoint's id.")
        var id: Int64

        @OptionGroup var list: JobListOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let jobs = try await database.withLedger {
                try await $0.webhookDeliveries(endpoint: id, state: list.selected, limit: list.limit)
            }
            if list.json {
                list.printJSON(jobs)
                return
            }
            print(Table(["job", "event id", "state", "attempts", "next or last try (UTC)", "last error"], jobs.map { job in
                let args = (try? JSONParser.parse(job.args))?.objectValue
                return [String(job.id), args?["eventId"]?.stringValue ?? "", job.state.rawValue, String(job.attempts),
                        (job.finishedAt ?? job.runAfter).ledgerText, job.lastError.map { String($0.prefix(80)) } ?? ""]
            }).render(empty: "no deliveries"))
        }
    }

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn new events into deliveries and send those that are due (what `ledger serve` does all the time).",
            discussion: "Exit status: 0, or 1 when a delivery failed for good during the run.")

        @Flag(help: "Keep running until no delivery is pending (waiting out retry delays), or until --timeout.")
        var untilIdle = false

        @Option(help: "With --until-idle: stop after this many seconds, leaving the rest for later.")
        var timeout: Int = 60

        @Option(help: "Deliveries sent at once.")
        var concurrency: Int = 8

        @OptionGroup var database: DatabaseOptions

        func validate() throws {
            guard timeout >= 1 else { throw ValidationError("--timeout must be at least 1 second") }
            guard concurrency >= 1 else { throw ValidationError("--concurrency must be at least 1") }
        }

        func run() async throws {
            // A connection per delivery at once, and one for the dispatcher.
            let runs = try await database.withLedger(poolSize: concurrency + 1) { ledger in
                let http = Webhooks.client()
                defer { Task { try? await http.shutdown() } }
                var settings = JobRunner.Options()
                settings.concurrency = concurrency
                settings.only = [.webhookDelivery]
                let runner = JobRunner(ledger: ledger, stores: StoreAPIConfiguration(), http: http, webhooks: http,
                                       options: settings, logger: LedgerLog.logger)
                let dispatcher = WebhookDispatcher(ledger: ledger, logger: LedgerLog.logger)
                try await dispatcher.dispatchAll()
                return untilIdle ? try await runner.runUntilIdle(timeout: .seconds(timeout)) : try await runner.runDue()
            }
            for run in runs {
                print("delivery \(run.id) to endpoint \(run.endpoint.map(String.init) ?? "?") attempt \(run.attempt): \(run.result.rawValue)"
                      + (run.error.map { " (\($0))" } ?? ""))
            }
            if runs.contains(where: { $0.result == .failed }) { throw ExitCode(1) }
        }
    }

    /// The HTTP client deliveries are sent with: 5 s to connect, 10 s for a whole delivery (a
    /// receiver should answer at once and work later), 8 connections per receiver.
    static func client() -> StoreHTTPClient {
        StoreHTTPClient(configuration: .init(connectTimeout: .seconds(5), requestTimeout: .seconds(10), connectionsPerHost: 8),
                        logger: LedgerLog.logger)
    }

    /// Runs `body`, turning the library's refusal of a field into a usage error naming its option.
    static func naming<T>(_ options: [String: String], _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as LedgerError where error.code == .invalidInput {
            var message = error.message
            for (field, option) in options { message = message.replacing("\(field):", with: "\(option):") }
            throw ValidationError(message)
        }
    }
}

extension WebhookEndpoint {
    /// Writes the element `ledger webhooks list --json` prints.
    func write(into w: inout JSONWriter) {
        w.beginObject()
        w.field("id", Int(id))
        w.field("url", url)
        w.key("eventTypes")
        if let eventTypes {
            w.beginArray()
            for type in eventTypes { w.string(type) }
            w.endArray()
        } else {
            w.null()
        }
        w.field("createdAt", createdAt)
        w.key("position")
        w.rawNumber(String(position))
        w.field("cursor", cursor.description)
        w.field("delivered", delivered)
        w.field("undelivered", undelivered)
        w.field("failed", failed)
        w.field("oldestUndelivered", oldestUndelivered)
        w.endObject()
    }
}
