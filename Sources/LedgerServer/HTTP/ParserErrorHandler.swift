import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import PurchaseLedger

/// Gives the refusals of the HTTP/1.1 parser (a bad `Content-Length`, too many or too large
/// headers, an unknown method, a bad chunk) the body every other refusal has: 400
/// `{"code":"INVALID_INPUT","message":…}` naming what is wrong, instead of an empty 400.
///
/// Hummingbird answers a parser error itself, outside every route and middleware: it writes a
/// bodiless 400 with `Connection: close` and closes. This handler sits on the connection's
/// pipeline between the HTTP codec and Hummingbird, sees the parser's error pass by, and fills in
/// that one answer's body as it is written.
final class ParserErrorHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// The parser's error, once one passed.
    private var parserError: HTTPParserError?
    /// The body to write before the answer's end, while the answer is being rewritten.
    private var pendingBody: ByteBuffer?

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? HTTPParserError { parserError = error }
        context.fireErrorCaught(error)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where parserError != nil && head.status == .badRequest && head.headerFields[.contentLength] == "0":
            let body = ByteBuffer(string: APIError(parserError: parserError!).json)
            head.headerFields[.contentType] = "application/json"
            head.headerFields[.contentLength] = String(body.readableBytes)
            pendingBody = body
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end(let trailers) where pendingBody != nil:
            context.write(wrapOutboundOut(.body(pendingBody!)), promise: nil)
            pendingBody = nil
            context.write(wrapOutboundOut(.end(trailers)), promise: promise)
        default:
            context.write(data, promise: promise)
        }
    }
}

extension APIError {
    /// The answer to a request the HTTP/1.1 parser refused: 400 `INVALID_INPUT`, the message
    /// naming the part of the request that is wrong.
    init(parserError error: HTTPParserError) {
        let message = switch error {
        case .invalidContentLength: "Content-Length: expected a number of bytes"
        case .unexpectedContentLength: "Content-Length: not allowed here (given twice, or with Transfer-Encoding)"
        case .headerOverflow: "headers: over the limit of 80 KiB or 1000 fields"
        case .invalidMethod: "method: not an HTTP method"
        case .invalidURL: "the request target: not a valid path and query"
        case .invalidVersion: "version: expected HTTP/1.1 or HTTP/1.0"
        case .invalidHeaderToken, .invalidCharactersUsed: "headers: a name or value holds a character HTTP does not allow"
        case .invalidChunkSize: "Transfer-Encoding: a chunk size is not valid"
        default: "the request is not valid HTTP/1.1 (\(error.debugDescription))"
        }
        self.init(.badRequest, LedgerError.Code.invalidInput.rawValue, message)
    }
}
