import Foundation
import HTTPTypes
import Hummingbird
import LedgerServer
import LedgerTestSupport
import Logging
import ServiceLifecycle
import Synchronization
import Testing

extension LedgerServerTests {
    /// Google's signing keys fetched from a URL (`LEDGER_GOOGLE_PUSH_JWKS=https://…`), served here
    /// by a loopback HTTP server of the test's own that can rotate them and count the fetches.
    @Suite("ledger serve: Google's keys from a URL")
    struct JWKSSourceTests {
        @Test func keysAreFetchedOnceThenAgainOnlyForAKeyIdTheSetLacks() async throws {
            let (first, second) = (TestOIDCIssuer(kid: "k1"), TestOIDCIssuer(kid: "k2"))
            try await KeyServer.with(TestOIDCIssuer.jwks([first])) { keys in
                let source = JWKSSource(url: keys.url, minimumRefetchInterval: .zero)
                let verifier = GoogleOIDCVerifier(keys: source, audience: TestOIDCIssuer.audience)
                try await verifier.verify(first.token())
                try await verifier.verify(first.token())
                #expect(keys.fetches == 1)
                // Google publishes the next key before it signs with it.
                keys.serve(TestOIDCIssuer.jwks([first, second]))
                try await verifier.verify(second.token())
                #expect(keys.fetches == 2)
                try await verifier.verify(first.token())
                #expect(keys.fetches == 2)
                await #expect(throws: GoogleOIDCVerifier.TokenError.self) {
                    try await verifier.verify(TestOIDCIssuer(kid: "k3").token())
                }
                #expect(keys.fetches == 3)
            }
        }

        @Test func anUnknownKeyIdRefetchesAtMostOncePerInterval() async throws {
            let issuer = TestOIDCIssuer(kid: "k1")
            try await KeyServer.with(TestOIDCIssuer.jwks([issuer])) { keys in
                let verifier = GoogleOIDCVerifier(keys: JWKSSource(url: keys.url, minimumRefetchInterval: .seconds(600)),
                                                  audience: TestOIDCIssuer.audience)
                for _ in 0..<5 {
                    await #expect(throws: GoogleOIDCVerifier.TokenError.self) {
                        try await verifier.verify(TestOIDCIssuer(kid: "forged").token())
                    }
                }
                #expect(keys.fetches == 1)
            }
        }

        @Test func theServerFetchesTheKeysFromTheConfiguredURLAndAnswers503WhenItCannot() async throws {
            let issuer = TestOIDCIssuer(kid: "k1")
            try await KeyServer.with(TestOIDCIssuer.jwks([issuer])) { keys in
                let environment = ["LEDGER_GOOGLE_PUSH_JWKS": keys.url.absoluteString,
                                   "LEDGER_GOOGLE_PUSH_AUDIENCE": TestOIDCIssuer.audience]
                let configuration = try ServerConfiguration(environment: environment)
                try await ServerHarness.with(stores: StoreMint.stores, { $0.googlePush = configuration.googlePush }) { server in
                    let reply = try await server.send("POST", "/notifications/google", key: issuer.token(),
                                                      body: StoreMint.googlePush(messageId: "m-jwks"))
                    #expect(reply.status == 200 && reply.json["status"] as? String == "ignored")
                    #expect(keys.fetches == 1)
                }
            }
            // Nothing listens on the URL: no key set can be had, so the push is not refused as
            // forged (401) but answered 503 for Pub/Sub to retry, and nothing is written.
            let closed = URL(string: "http://127.0.0.1:1/certs")!
            try await ServerHarness.with(stores: StoreMint.stores, {
                $0.googlePush = GooglePushAuthentication(oidc: GoogleOIDCVerifier(keys: JWKSSource(url: closed),
                                                                                  audience: TestOIDCIssuer.audience))
            }) { server in
                let before = try server.snapshot()
                let reply = try await server.send("POST", "/notifications/google", key: issuer.token(),
                                                  body: StoreMint.googlePush(messageId: "m-jwks-2"))
                #expect(reply.status == 503 && reply.code == "UNAVAILABLE")
                #expect(reply.message.contains("signing keys"))
                #expect(try server.snapshot() == before)
            }
        }
    }
}

/// A loopback HTTP server answering `GET /certs` with a JWKS the test can change, counting requests.
struct KeyServer: Sendable {
    let url: URL
    private let state: State

    final class State: Sendable {
        let document: Mutex<String>
        let count = Mutex(0)
        init(_ document: String) { self.document = Mutex(document) }
    }

    var fetches: Int { state.count.withLock { $0 } }

    func serve(_ document: String) { state.document.withLock { $0 = document } }

    static func with(_ document: String, _ body: @Sendable (KeyServer) async throws -> Void) async throws {
        let state = State(document)
        let router = Router()
        router.get("/certs") { _, _ in
            state.count.withLock { $0 += 1 }
            return Response(status: .ok, headers: [.contentType: "application/json"],
                            body: .init(byteBuffer: ByteBuffer(string: state.document.withLock { $0 })))
        }
        let (ports, bound) = AsyncStream.makeStream(of: Int.self)
        let logger = Logger(label: "key-server") { _ in SwiftLogNoOpLogHandler() }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { bound.yield($0.localAddress?.port ?? 0) }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var next = ports.makeAsyncIterator()
            guard let port = await next.next() else { throw TestSetupError("the key server did not start") }
            let server = KeyServer(url: URL(string: "http://127.0.0.1:\(port)/certs")!, state: state)
            do {
                try await body(server)
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}
