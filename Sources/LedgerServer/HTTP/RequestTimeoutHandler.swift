import HTTPTypes
import Logging
import NIOCore
import NIOHTTPTypes

/// Bounds how long one request may take to arrive, head and body: a client that sends a byte
/// every few seconds (each byte would reset the idle timer) is answered 408 `REQUEST_TIMEOUT`
/// and its connection closed once the server has waited `limit` for the request's bytes.
///
/// The clock runs from the request's first byte to its last, but only while the server is asking
/// for bytes the client has not sent (between a `read` and the data it brings). While the server
/// does not read (a route busy with the database before it reads on, a streamed batch applying
/// what it has), the clock stands, so a slow server never cuts off a fast client. After the
/// answer was sent, a body nobody reads any more is drained on the wall clock: the rest of the
/// budget, then the connection closes. Between requests the connection is idle and the idle
/// timeout governs it, as before.
///
/// The handler sits on the connection's pipeline between the HTTP codec and Hummingbird, so it
/// sees each request part arrive and each response part leave. The 408 is written by the
/// handler itself when no earlier request is still waiting for its answer; the route that is
/// reading the body sees the same error thrown from the body, so its log line says 408 too.
final class RequestTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limit: TimeAmount
    private let logger: Logger

    /// A request's bytes have begun to arrive and its end has not.
    private var receiving = false
    /// Whether the request being received has shown its head.
    private var receivingHasHead = false
    /// The time the server has waited for the bytes of the request being received.
    private var waited: TimeAmount = .zero
    /// Since when the server has been asking for bytes that have not come.
    private var waitingSince: NIODeadline?
    /// The answer to the request being received was sent: the rest of its body is drained.
    private var draining = false
    /// A request ended during the current read, so bytes left over belong to the next one.
    private var endedInThisRead = false
    /// Requests whose head arrived and whose answer has not ended.
    private var unanswered = 0
    /// An answer has begun and not ended.
    private var answering = false
    private var timer: Scheduled<Void>?

    init(limit: Duration, logger: Logger) {
        let (seconds, attoseconds) = limit.components
        self.limit = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        self.logger = logger
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimer()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimer()
        receiving = false
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            if !receiving { begin() }
            receivingHasHead = true
            unanswered += 1
            stopWaiting()
        case .body:
            stopWaiting()
        case .end:
            endRequest()
            endedInThisRead = true
        }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Bytes came that made no whole request: the head of the next one has begun.
        if !receiving && !endedInThisRead { begin() }
        endedInThisRead = false
        stopWaiting()
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        if receiving && waitingSince == nil { startWaiting(context) }
        context.read()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.kind != .informational:
            answering = true
        case .end:
            answering = false
            unanswered -= 1
            // The answer is out and its request's body still coming: nobody will read it, so
            // the server waits for it on the wall clock.
            if receiving && receivingHasHead && unanswered == 0 {
                draining = true
                if waitingSince == nil { startWaiting(context) }
            }
        default:
            break
        }
        context.write(data, promise: promise)
    }

    private func begin() {
        receiving = true
        receivingHasHead = false
        waited = .zero
        waitingSince = nil
        draining = false
    }

    private func endRequest() {
        receiving = false
        draining = false
        waitingSince = nil
        cancelTimer()
    }

    private func startWaiting(_ context: ChannelHandlerContext) {
        waitingSince = .now()
        cancelTimer()
        let loop = context.eventLoop.assumeIsolatedUnsafeUnchecked()
        timer = loop.scheduleTask(in: limit - waited) { [self] in
            timer = nil
            timedOut(context)
        }
    }

    private func stopWaiting() {
        guard !draining, let since = waitingSince else { return }
        waited = waited + (NIODeadline.now() - since)
        waitingSince = nil
        cancelTimer()
    }

    private func cancelTimer() {
        timer?.cancel()
        timer = nil
    }

    private func timedOut(_ context: ChannelHandlerContext) {
        guard receiving, context.channel.isActive else { return }
        let seconds = limit.nanoseconds / 1_000_000_000
        let error = APIError(.requestTimeout, "REQUEST_TIMEOUT",
                             "the request did not arrive within \(seconds) s (LEDGER_HTTP_REQUEST_TIMEOUT)")
        // Answer only when no earlier request on this connection still waits for its answer, so
        // that the 408 cannot be taken for another request's.
        if !answering && unanswered == (receivingHasHead ? 1 : 0) {
            let body = ByteBuffer(string: error.json)
            let head = HTTPResponse(status: .requestTimeout, headerFields: [
                .contentType: "application/json", .contentLength: String(body.readableBytes), .connection: "close",
            ])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(body)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
        if !receivingHasHead {
            // No route saw this one, so no request log line will tell of it.
            logger.info("request", metadata: ["method": "OTHER", "route": "unmatched", "status": "408",
                                               "error": "the request head did not arrive in time"])
        }
        receiving = false
        // The route reading the body gets the error (its log line says 408), then the
        // connection closes.
        context.fireErrorCaught(error)
        context.close(promise: nil)
    }
}
