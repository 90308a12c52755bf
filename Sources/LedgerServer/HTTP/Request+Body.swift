import HTTPTypes
import Hummingbird

extension Request {
    /// The whole body, refused with 413 `PAYLOAD_TOO_LARGE` beyond `limit` bytes (by
    /// `Content-Length` before reading anything, else while reading).
    mutating func bytes(upTo limit: Int) async throws -> [UInt8] {
        let tooLarge = APIError(.contentTooLarge, "PAYLOAD_TOO_LARGE", "the request body is over the limit of \(limit) bytes")
        if let length = headers[.contentLength].flatMap({ Int($0) }), length > limit { throw tooLarge }
        do {
            let buffer = try await collectBody(upTo: limit)
            return Array(buffer.readableBytesView)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw tooLarge
        }
    }
}
