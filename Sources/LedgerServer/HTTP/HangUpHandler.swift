import NIOCore
import NIOHTTPTypes

/// Tells a request's work that its client went away, so a report stops on the database too.
///
/// Hummingbird neither cancels a handler when its client leaves nor closes the channel: it allows
/// remote half-closure, so a client that closes its socket shows only as `inputClosed`, and the
/// handler runs to its end. This handler, one per connection, sees that event (or the channel
/// going inactive) and fires the ``HangUpWatch``es registered on it. A client that only shuts
/// down its sending side and still waits for the answer is taken as gone too; HTTP clients do
/// not do that.
final class HangUpHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart

    private var hungUp = false
    private var watches: [HangUpWatch] = []

    init() {}

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event { hangUp() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        hangUp()
        context.fireChannelInactive()
    }

    /// Fires `watch` when the client goes away (at once if it has); on the channel's event loop.
    func add(_ watch: HangUpWatch) {
        if hungUp { return watch.fire() }
        watches.removeAll { $0.isDone }
        watches.append(watch)
    }

    private func hangUp() {
        guard !hungUp else { return }
        hungUp = true
        let fired = watches
        watches = []
        for watch in fired { watch.fire() }
    }

    /// Runs `body` in a task of its own that is cancelled when the client of `channel` goes away
    /// (or when the calling task is cancelled); returns its value. Without a ``HangUpHandler`` on
    /// the channel it only runs `body`.
    static func cancellingOnHangUp<T: Sendable>(_ channel: any Channel,
                                                _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let work = Task { try await body() }
        let watch = HangUpWatch { work.cancel() }
        defer { watch.disarm() }
        try? await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.handler(type: HangUpHandler.self).add(watch)
        }.get()
        return try await withTaskCancellationHandler { try await work.value } onCancel: { work.cancel() }
    }
}
