import Crypto
import Foundation
import Hummingbird
import LedgerTestSupport
import Logging
import ServiceLifecycle
import Synchronization

/// A webhook receiver on loopback, as a backend would run one: it records every request (its
/// headers and body, and when it came) and answers as `answer` says for each: a status, after a
/// delay (a delay longer than the ledger's 10 s request timeout is a receiver that hangs).
final class WebhookReceiver: Sendable {
    struct Request: Sendable {
        var eventId: String
        var type: String
        var attempt: Int
        var signature: String
        var body: String
        var receivedAt: Date
        /// The status it was answered (0: none, the ledger gave up waiting first).
        var status: Int

        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]) ?? [:] }
        var userId: String? { json["userId"] as? String }
        var position: Int? { json["position"] as? Int }
    }

    /// What to answer the `n`th request (from 0) for an event id: a status and a delay.
    typealias Answer = @Sendable (_ n: Int, _ request: Request) -> (status: Int, delay: Duration)

    let port: Int
    private let requests = Mutex<[Request]>([])

    private init(port: Int) { self.port = port }

    var url: String { "http://127.0.0.1:\(port)/hook" }
    var received: [Request] { requests.withLock { $0 } }
    /// The requests answered 2xx, in the order they were answered.
    var accepted: [Request] { received.filter { (200..<300).contains($0.status) } }

    /// Runs `body` with a receiver listening on a free loopback port.
    static func with(answer: @escaping Answer = { _, _ in (200, .zero) },
                     _ body: @Sendable (WebhookReceiver) async throws -> Void) async throws {
        let box = Mutex<WebhookReceiver?>(nil)
        let router = Router()
        router.post("/hook") { request, _ -> Response in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            guard let receiver = box.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            var seen = Request(eventId: request.headers[.init("Ledger-Event-Id")!] ?? "",
                               type: request.headers[.init("Ledger-Event-Type")!] ?? "",
                               attempt: Int(request.headers[.init("Ledger-Delivery-Attempt")!] ?? "") ?? 0,
                               signature: request.headers[.init("Ledger-Signature")!] ?? "",
                               body: String(buffer: bytes), receivedAt: Date(), status: 0)
            let index = receiver.requests.withLock { list in
                list.append(seen)
                return list.count - 1
            }
            let n = receiver.received.prefix(index).filter { $0.eventId == seen.eventId }.count
            let (status, delay) = answer(n, seen)
            try await Task.sleep(for: delay)
            seen.status = status
            receiver.requests.withLock { $0[index].status = status }
            return Response(status: .init(code: status))
        }
        let (ports, bound) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "webhook-receiver")
        logger.logLevel = .critical
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in bound.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try? await group.run() }
            var next = ports.makeAsyncIterator()
            guard let port = await next.next(), port > 0 else { throw TestSetupError("the receiver did not start") }
            let receiver = WebhookReceiver(port: port)
            box.withLock { $0 = receiver }
            do {
                try await body(receiver)
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
        }
    }

    /// Waits until `condition` holds of the requests so far, up to `timeout`.
    func wait(timeout: Duration, until condition: ([Request]) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(received) { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return condition(received)
    }

    /// The check README's "Webhooks" tells receivers to make: the signature header's HMAC over
    /// `timestamp.body` with the secret, and a timestamp within `tolerance` of now.
    static func verify(signature: String, body: String, secret: String, now: Date = Date(), tolerance: TimeInterval = 300) -> Bool {
        var timestamp: String?
        var mac: String?
        for part in signature.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { timestamp = pair[1] }
            if pair[0] == "v1" { mac = pair[1] }
        }
        guard let timestamp, let seconds = Double(timestamp), let mac else { return false }
        guard abs(now.timeIntervalSince1970 - seconds) <= tolerance else { return false }
        let expected = HMAC<SHA256>.authenticationCode(for: Data((timestamp + "." + body).utf8),
                                                        using: SymmetricKey(data: Data(secret.utf8)))
        let hex = expected.map { String(format: "%02x", $0) }.joined()
        return hex.utf8.count == mac.utf8.count && zip(hex.utf8, mac.utf8).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
