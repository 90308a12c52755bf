import Foundation
import LedgerTestSupport
import Postgres
import Testing

extension LedgerServerTests {
    /// Webhooks out (README, "Webhooks"), end to end: the built `ledger`, a real database and
    /// receivers on loopback that fail, hang, answer slowly and come back.
    @Suite("Webhooks out")
    struct WebhookTests {
        /// `ledger webhooks add --json`: the endpoint's id and its secret.
        static func add(_ db: TestDatabase, url: String, events: [String] = []) throws -> (id: Int, secret: String) {
            let out = try LedgerProcess.run(["webhooks", "add", "--url", url, "--json", "--database-url", db.conninfo]
                                            + (events.isEmpty ? [] : ["--events"] + events))
            #expect(out.status == 0, "\(out.stderr)")
            let json = try jsonObject(out.stdout)
            return (try #require(json["id"] as? Int), try #require(json["secret"] as? String))
        }

        /// A purchase line of `user` named `seq`, of a consumable unless `changes` say otherwise.
        static func purchase(_ user: String, _ seq: String, _ changes: [String: String?] = [:]) -> String {
            Fixture.purchaseLine(["userId": "\"\(user)\"", "paymentSeq": "\"\(seq)\"", "transactionId": "\"T-\(seq)\"",
                                  "purchaseToken": "\"tok-\(seq)\""].merging(changes) { $1 })
        }

        static func consume(_ user: String, _ seq: String) -> String {
            #"{"type":"consume","userId":"\#(user)","paymentSeq":"\#(seq)","purchaseToken":"tok-\#(seq)"}"#
        }

        static func startServe(_ db: TestDatabase) throws -> LedgerProcess.Running {
            let serve = try LedgerProcess.start(["serve", "--port", "0", "--database-url", db.conninfo])
            guard serve.waitForOutput(timeout: 30, { $0.contains { $0.hasPrefix("listening on http://127.0.0.1:") } }) else {
                serve.kill()
                throw TestSetupError("ledger serve did not start: \(serve.wait().stderr)")
            }
            return serve
        }

        /// Each user's events, as first received, must come in log order.
        static func firstArrivals(_ requests: [WebhookReceiver.Request]) -> [String: [Int]] {
            var seen: Set<String> = []
            var order: [String: [Int]] = [:]
            for request in requests where request.eventId.hasPrefix("event:") && seen.insert(request.eventId).inserted {
                order[request.userId ?? "", default: []].append(request.position ?? -1)
            }
            return order
        }

        /// Three users' purchases and consumes while the receiver fails u1's first delivery twice
        /// (500), hangs past the ledger's timeout on one of u2's, and answers slowly otherwise:
        /// every event arrives at least once, each user's in log order, u1's failures hold back
        /// only u1's later events, a duplicate carries the same id and body, and every request
        /// passes the documented signature check (a forged body or a stale timestamp fails it).
        @Test func everyEventArrivesSignedOncePerIdInEachUsersOrderThroughFailuresAndTimeouts() async throws {
            try await TestDatabase.with { db in
                try await WebhookReceiver.with(answer: { n, request in
                    if request.userId == "u1", request.json["position"] as? Int == 1, n < 2 { return (500, .zero) }
                    if request.json["position"] as? Int == 4, n == 0 { return (200, .seconds(12)) }
                    return (200, .milliseconds(20))
                }) { receiver in
                    let endpoint = try Self.add(db, url: receiver.url)
                    let serve = try Self.startServe(db)
                    defer { serve.kill() }
                    var lines: [String] = []
                    for n in 0..<5 {
                        for user in ["u1", "u2", "u3"] {
                            lines.append(Self.purchase(user, "\(user)-\(n)"))
                            lines.append(Self.consume(user, "\(user)-\(n)"))
                        }
                    }
                    try db.withConnection { _ = try $0.ingest(lines) }
                    let expected = try db.withConnection { try $0.query("SELECT count(*)::int AS n FROM ledger.events")[0].decode("n", as: Int32.self) }
                    #expect(expected == 30)
                    let all = try await receiver.wait(timeout: .seconds(120)) { requests in
                        Set(requests.filter { (200..<300).contains($0.status) }.map(\.eventId)).count >= 30
                    }
                    #expect(all, "delivered: \(Set(receiver.accepted.map(\.eventId)).count) of 30")

                    let requests = receiver.received
                    for (user, positions) in Self.firstArrivals(requests) {
                        #expect(positions == positions.sorted(), "\(user)'s events arrived out of order: \(positions)")
                    }
                    // u1's first event was refused twice, then taken; meanwhile u2 and u3 were not held.
                    let u1First = requests.filter { $0.eventId == "event:1" }
                    #expect(u1First.map(\.status) == [500, 500, 200])
                    let u1Taken = try #require(u1First.last?.receivedAt)
                    #expect(requests.contains { $0.userId == "u3" && $0.status == 200 && $0.receivedAt < u1Taken })
                    // u2's hung delivery timed out and came again, the same id with the same body.
                    let hung = requests.filter { $0.position == 4 }
                    let firstHung = try #require(hung.first)
                    let again = requests.filter { $0.eventId == firstHung.eventId }
                    #expect(again.count >= 2)
                    #expect(Set(again.map(\.body)).count == 1)
                    #expect(Set(again.map(\.signature)).count == again.count, "each attempt is signed anew")

                    for request in requests {
                        #expect(WebhookReceiver.verify(signature: request.signature, body: request.body, secret: endpoint.secret),
                                "\(request.eventId) fails the signature check")
                        #expect(request.json["id"] as? String == request.eventId)
                    }
                    let sample = try #require(requests.first)
                    let forged = sample.body.replacingOccurrences(of: "\"userId\":\"", with: "\"userId\":\"x")
                    #expect(forged != sample.body)
                    #expect(!WebhookReceiver.verify(signature: sample.signature, body: forged, secret: endpoint.secret),
                            "a forged body passes")
                    #expect(!WebhookReceiver.verify(signature: sample.signature, body: sample.body, secret: "whsec_other"))
                    #expect(!WebhookReceiver.verify(signature: sample.signature, body: sample.body, secret: endpoint.secret,
                                                    now: sample.receivedAt.addingTimeInterval(600)), "a stale signature passes")
                    // The body: the event in the feed's form, its user and the user's state.
                    let consumed = try #require(requests.first { $0.type == "PaymentConsumed" && $0.userId == "u3" }?.json)
                    #expect((consumed["data"] as? [String: Any])?["paymentSeq"] as? String != nil)
                    #expect((consumed["state"] as? [String: Any])?["unconsumed"] is Int)
                    #expect(consumed["occurredAt"] as? String != nil && consumed["recordedAt"] as? String != nil)

                    let metrics = try await HTTP.send("GET", "http://127.0.0.1:\(try Self.port(serve))/metrics")
                    #expect(metrics.text.contains("ledger_webhook_deliveries_total{endpoint=\"\(endpoint.id)\",result=\"retrying\"}"))
                    #expect(metrics.text.contains("ledger_webhook_oldest_undelivered_seconds{endpoint=\"\(endpoint.id)\"} 0"))
                    #expect(metrics.text.contains("ledger_feed_clients_waiting"))
                    #expect(!metrics.text.contains(endpoint.secret))
                    #expect(!serve.linesSoFar.joined().contains(endpoint.secret))
                }
            }
        }

        static func port(_ serve: LedgerProcess.Running) throws -> Int {
            try #require(serve.linesSoFar.first.flatMap { Int($0.split(separator: ":").last ?? "") })
        }

        /// A subscription that expires a few seconds from now, with no event at its expiry: the
        /// ledger notices the instant passing and delivers SubscriptionNotEntitled within
        /// seconds, after the SubscriptionEntitled its purchase caused.
        @Test func anExpiryWithNoEventIsDeliveredSoonAfterItsInstant() async throws {
            try await TestDatabase.with { db in
                try await WebhookReceiver.with { receiver in
                    _ = try Self.add(db, url: receiver.url, events: ["SubscriptionEntitled", "SubscriptionNotEntitled"])
                    let serve = try Self.startServe(db)
                    defer { serve.kill() }
                    let expiry = Date().addingTimeInterval(5)
                    let formatter = ISO8601DateFormatter()
                    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                    try db.withConnection {
                        _ = try $0.ingest([Self.purchase("s1", "S-1", [
                            "productId": "\"vip\"", "productType": "\"AUTO_RENEWABLE\"", "price": "\"4.99\"",
                            "originalTransactionId": "\"T-S-1\"",
                            "purchaseTime": "\"\(formatter.string(from: Date().addingTimeInterval(-60)))\"",
                            "expiryTime": "\"\(formatter.string(from: expiry))\""])])
                    }
                    let ended = try await receiver.wait(timeout: .seconds(60)) { $0.contains { $0.type == "SubscriptionNotEntitled" } }
                    #expect(ended)
                    let requests = receiver.accepted
                    #expect(requests.map(\.type) == ["SubscriptionEntitled", "SubscriptionNotEntitled"])
                    let notEntitled = try #require(requests.last)
                    #expect(notEntitled.json["cause"] as? String == "time")
                    #expect(notEntitled.receivedAt >= expiry)
                    // "Within seconds": the dispatcher looks every quarter second; the bound is loose for a shared machine.
                    #expect(notEntitled.receivedAt.timeIntervalSince(expiry) < 20,
                            "noticed \(notEntitled.receivedAt.timeIntervalSince(expiry)) s after the expiry")
                    let data = try #require(notEntitled.json["data"] as? [String: Any])
                    #expect(data["originalTransactionId"] as? String == "T-S-1" && data["entitled"] as? Bool == false)
                    #expect(((notEntitled.json["state"] as? [String: Any])?["entitled"] as? [Any])?.isEmpty == true)

                    // A refund ends a month's entitlement at once: the change comes with the event.
                    try db.withConnection {
                        _ = try $0.ingest([Self.purchase("s2", "S-2", [
                            "productId": "\"vip\"", "productType": "\"AUTO_RENEWABLE\"", "price": "\"4.99\"",
                            "originalTransactionId": "\"T-S-2\"",
                            "purchaseTime": "\"\(formatter.string(from: Date().addingTimeInterval(-60)))\"",
                            "expiryTime": "\"\(formatter.string(from: Date().addingTimeInterval(30 * 86400)))\""])])
                    }
                    #expect(try await receiver.wait(timeout: .seconds(60)) { $0.contains { $0.userId == "s2" } })
                    try db.withConnection { _ = try $0.ingest([#"{"type":"refund","paymentSeq":"S-2","reason":"test"}"#]) }
                    let refunded = try await receiver.wait(timeout: .seconds(60)) { $0.filter { $0.userId == "s2" }.count >= 2 }
                    #expect(refunded)
                    let s2 = receiver.accepted.filter { $0.userId == "s2" }
                    #expect(s2.map(\.type) == ["SubscriptionEntitled", "SubscriptionNotEntitled"])
                    #expect(s2.map { $0.json["cause"] as? String } == ["event", "event"])
                }
            }
        }

        /// `kill -9` of the server while a delivery is in flight (the receiver holds the request)
        /// and others wait: after a restart every event is delivered; the one in flight comes
        /// again once its lease runs out, under its own id.
        @Test func killNineMidDeliveryLosesNothing() async throws {
            try await TestDatabase.with { db in
                try await WebhookReceiver.with(answer: { n, request in
                    request.json["position"] as? Int == 1 && n == 0 ? (200, .seconds(30)) : (200, .zero)
                }) { receiver in
                    _ = try Self.add(db, url: receiver.url)
                    let serve = try Self.startServe(db)
                    try db.withConnection { _ = try $0.ingest((0..<10).map { Self.purchase("k1", "K-\($0)") }) }
                    let inFlight = try await receiver.wait(timeout: .seconds(60)) { $0.contains { $0.eventId == "event:1" } }
                    #expect(inFlight)
                    serve.kill(SIGKILL)
                    _ = serve.wait()
                    try db.withConnection { _ = try $0.ingest((10..<15).map { Self.purchase("k1", "K-\($0)") }) }
                    let restarted = try Self.startServe(db)
                    defer { restarted.kill() }
                    let all = try await receiver.wait(timeout: .seconds(120)) { requests in
                        Set(requests.filter { $0.status == 200 }.map(\.eventId)).count >= 15
                    }
                    #expect(all, "delivered after the restart: \(Set(receiver.accepted.map(\.eventId)).sorted())")
                    #expect(Self.firstArrivals(receiver.received)["k1"] == Array(1...15))
                    #expect(receiver.received.filter { $0.eventId == "event:1" }.count >= 2)
                }
            }
        }

        /// The commands: a bad URL or type is refused naming the option and writes nothing;
        /// `list` shows counts and never the secret; `replay --from` sends the same ids and bodies
        /// again, in order; `remove` stops deliveries.
        @Test func theCommandsAddListReplayAndRemove() async throws {
            try await TestDatabase.with { db in
                try await WebhookReceiver.with { receiver in
                    let badURL = try LedgerProcess.run(["webhooks", "add", "--url", "ftp://x", "--database-url", db.conninfo])
                    #expect(badURL.status == 2 && badURL.stderr.contains("--url"))
                    let badType = try LedgerProcess.run(["webhooks", "add", "--url", receiver.url, "--events", "Nope",
                                                         "--database-url", db.conninfo])
                    #expect(badType.status == 2 && badType.stderr.contains("--events") && badType.stderr.contains("Nope"))
                    #expect(try db.withConnection { try $0.query("SELECT count(*)::int AS n FROM ledger.webhook_endpoints")[0].decode("n", as: Int32.self) } == 0)

                    try db.withConnection { _ = try $0.ingest([Self.purchase("c1", "C-0")]) }
                    let endpoint = try Self.add(db, url: receiver.url)
                    try db.withConnection { _ = try $0.ingest([Self.consume("c1", "C-0"), Self.purchase("c1", "C-1")]) }
                    let run = try LedgerProcess.run(["webhooks", "run", "--until-idle", "--timeout", "30", "--database-url", db.conninfo])
                    #expect(run.status == 0, "\(run.stderr)")
                    #expect(receiver.accepted.map(\.eventId) == ["event:2", "event:3"], "an endpoint hears what comes after it was added")

                    let listed = try LedgerProcess.run(["webhooks", "list", "--json", "--database-url", db.conninfo])
                    let list = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
                    #expect(list.count == 1 && list[0]["delivered"] as? Int == 2 && list[0]["failed"] as? Int == 0)
                    #expect(list[0]["position"] as? Int == 3 && list[0]["cursor"] as? String == "3", "\(list)")
                    #expect(!listed.stdout.contains(endpoint.secret))
                    // The secret is kept to sign, and no reader may select it.
                    #expect(throws: PostgresError.self) {
                        try db.withConnection { connection in
                            try connection.transaction { tx in
                                try tx.execute("SET LOCAL ROLE ledger_reader")
                                _ = try tx.query("SELECT secret FROM ledger.webhook_endpoints")
                            }
                        }
                    }

                    let bodies = Dictionary(receiver.accepted.map { ($0.eventId, $0.body) }) { a, _ in a }
                    let replay = try LedgerProcess.run(["webhooks", "replay", String(endpoint.id), "--from", "1", "--database-url", db.conninfo])
                    #expect(replay.status == 0, "\(replay.stderr)")
                    _ = try LedgerProcess.run(["webhooks", "run", "--until-idle", "--timeout", "30", "--database-url", db.conninfo])
                    #expect(receiver.accepted.map(\.eventId) == ["event:2", "event:3", "event:2", "event:3"])
                    for request in receiver.accepted.dropFirst(2) where bodies[request.eventId] != nil {
                        #expect(request.body == bodies[request.eventId], "a replay sends the same body")
                    }
                    #expect(try LedgerProcess.run(["webhooks", "replay", "99", "--from", "1", "--database-url", db.conninfo]).status == 1)
                    for bad in ["0", "x", "1,2", "-3", ""] {
                        let refused = try LedgerProcess.run(["webhooks", "replay", String(endpoint.id), "--from", bad, "--database-url", db.conninfo])
                        #expect(refused.status == 2 && refused.stderr.contains("--from"), "--from \(bad): \(refused.stderr)")
                    }
                    let delivered = try LedgerProcess.run(["webhooks", "deliveries", String(endpoint.id), "--state", "done", "--json",
                                                           "--database-url", db.conninfo])
                    let deliveries = try #require(try JSONSerialization.jsonObject(with: Data(delivered.stdout.utf8)) as? [[String: Any]])
                    #expect(deliveries.count == 2 && deliveries.allSatisfy { $0["kind"] as? String == "webhook.delivery" })
                    let badState = try LedgerProcess.run(["webhooks", "deliveries", String(endpoint.id), "--state", "sent",
                                                          "--database-url", db.conninfo])
                    #expect(badState.status == 2 && badState.stderr.contains("--state"))

                    #expect(try LedgerProcess.run(["webhooks", "remove", String(endpoint.id), "--database-url", db.conninfo]).status == 0)
                    #expect(try LedgerProcess.run(["webhooks", "remove", String(endpoint.id), "--database-url", db.conninfo]).status == 1)
                    let before = receiver.received.count
                    try db.withConnection { _ = try $0.ingest([Self.consume("c1", "C-1")]) }
                    _ = try LedgerProcess.run(["webhooks", "run", "--until-idle", "--timeout", "10", "--database-url", db.conninfo])
                    #expect(receiver.received.count == before)
                }
            }
        }
    }
}
