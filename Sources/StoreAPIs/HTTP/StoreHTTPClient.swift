import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// The one HTTP client the store clients share: pooled connections (HTTP/1.1 and HTTP/2), a
/// connect timeout and a deadline for each whole request, TLS with the system's trust roots for
/// `https` URLs, no redirects followed. Call `shutdown()` once, after the last call.
public final class StoreHTTPClient: Sendable {
    /// Timeouts and pool size.
    public struct Configuration: Sendable {
        /// How long a new connection (TCP and TLS) may take.
        public var connectTimeout: Duration
        /// How long a whole request may take, from sending it to the answer's last byte.
        public var requestTimeout: Duration
        /// Connections kept open to one host (HTTP/1.1).
        public var connectionsPerHost: Int

        /// Defaults: 10 s to connect, 30 s for a whole request, 8 connections per host.
        public init(connectTimeout: Duration = .seconds(10), requestTimeout: Duration = .seconds(30),
                    connectionsPerHost: Int = 8) {
            self.connectTimeout = connectTimeout
            self.requestTimeout = requestTimeout
            self.connectionsPerHost = connectionsPerHost
        }
    }

    /// The largest answer read; the stores' answers are a few kilobytes, a history page less than a megabyte.
    static let maximumAnswerBytes = 16 << 20

    let client: HTTPClient
    let configuration: Configuration
    let logger: Logger
    let observer: CallObserver?

    /// Told of every call when it ends: the store, the route template and the status (or
    /// `timeout`, `connection`), for metrics. Never the path, a header or a body.
    public typealias CallObserver = @Sendable (_ store: String, _ route: String, _ status: String) -> Void

    /// A client on the shared event loop group. `logger` receives one debug line per call (store,
    /// route template, status), never a path, header or body.
    public init(configuration: Configuration = Configuration(), logger: Logger = Logger(label: "StoreAPIs"),
                observer: CallObserver? = nil) {
        var http = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .nanoseconds(Self.nanoseconds(configuration.connectTimeout)),
                           read: .nanoseconds(Self.nanoseconds(configuration.requestTimeout))),
            connectionPool: .init(idleTimeout: .seconds(60),
                                  concurrentHTTP1ConnectionsPerHostSoftLimit: configuration.connectionsPerHost))
        http.httpVersion = .automatic
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: http)
        self.configuration = configuration
        self.logger = logger
        self.observer = observer
    }

    /// Closes the pooled connections. No call may be made after it.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// An answer of any status: the store clients decide what it means.
    struct Answer: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: Data
    }

    /// Sends one request and reads the whole answer. Transport failures become `StoreAPIError`s
    /// naming `store` and `route`; an answer of any status is returned as it came.
    func send(store: StoreAPIError.Store, route: String, method: HTTPMethod, url: String,
              headers: HTTPHeaders, body: Data? = nil) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers = headers
        if let body {
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let started = ContinuousClock.now
        do {
            let response = try await client.execute(
                request, timeout: .nanoseconds(Self.nanoseconds(configuration.requestTimeout)), logger: nil)
            let bytes = try await response.body.collect(upTo: Self.maximumAnswerBytes)
            logger.debug("store call", metadata: [
                "store": "\(store.rawValue)", "route": "\(route)", "status": "\(response.status.code)",
                "ms": "\((ContinuousClock.now - started).milliseconds)",
            ])
            observer?(store.rawValue, route, String(response.status.code))
            return Answer(status: Int(response.status.code), headers: response.headers, body: Data(bytes.readableBytesView))
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            let failure = Self.transportFailure(error, store: store, route: route)
            observer?(store.rawValue, route, failure.kind == .timeout ? "timeout" : "connection")
            logger.debug("store call failed", metadata: [
                "store": "\(store.rawValue)", "route": "\(route)", "error": "\(failure.kind)",
            ])
            throw failure
        }
    }

    /// One call with a bearer credential (Google's access token, Apple's JWT): sent with
    /// `credential`, and after a 401 once more with the one `renew` gives in place of the refused
    /// one. An answer outside 2xx is thrown as `refusal` reads it (each store has its error body).
    func sendAuthorized(store: StoreAPIError.Store, route: String, method: HTTPMethod, url: String, body: Data?,
                        credential: String, renew: (_ refused: String) async throws -> String,
                        refusal: (Answer) -> StoreAPIError) async throws -> Answer {
        var token = credential
        var retried = false
        while true {
            var headers = HTTPHeaders()
            headers.add(name: "Authorization", value: "Bearer " + token)
            headers.add(name: "Accept", value: "application/json")
            if body != nil { headers.add(name: "Content-Type", value: "application/json") }
            let answer = try await send(store: store, route: route, method: method, url: url, headers: headers, body: body)
            if answer.status == 401 && !retried {
                retried = true
                logger.debug("store credential refused, getting a new one", metadata: ["store": "\(store.rawValue)", "route": "\(route)"])
                token = try await renew(token)
                continue
            }
            guard (200..<300).contains(answer.status) else { throw refusal(answer) }
            return answer
        }
    }

    /// A transport error as a `StoreAPIError`: timeouts apart, everything is a connection failure.
    /// The underlying error's text is not kept whole: NIO's errors can quote the URL.
    static func transportFailure(_ error: any Error, store: StoreAPIError.Store, route: String) -> StoreAPIError {
        if let error = error as? HTTPClientError {
            let timeouts: [HTTPClientError] = [.deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout,
                                               .tlsHandshakeTimeout, .getConnectionFromPoolTimeout]
            if timeouts.contains(error) {
                return StoreAPIError(store: store, route: route, kind: .timeout, detail: Self.code(of: error))
            }
            if [HTTPClientError.invalidURL, .emptyHost, .emptyScheme].contains(error) {
                return StoreAPIError(store: store, route: route, kind: .invalidRequest, detail: "invalid URL")
            }
            return StoreAPIError(store: store, route: route, kind: .connection, detail: Self.code(of: error))
        }
        return StoreAPIError(store: store, route: route, kind: .connection, detail: Self.code(of: error))
    }

    /// A short name for a transport error, with nothing of the request in it.
    static func code(of error: any Error) -> String {
        if let error = error as? HTTPClientError {
            let names: [(HTTPClientError, String)] = [
                (.deadlineExceeded, "deadline exceeded"), (.readTimeout, "read timeout"),
                (.connectTimeout, "connect timeout"), (.remoteConnectionClosed, "connection closed by the store"),
            ]
            return names.first { $0.0 == error }?.1 ?? "HTTP client error"
        }
        if let error = error as? IOError { return "I/O error \(error.errnoCode)" }
        return String(describing: type(of: error))
    }
}

extension Duration {
    /// Whole milliseconds, for logs.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
