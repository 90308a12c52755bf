import Foundation
import NIOCore

/// A request body handed from the task that reads it off the connection to a synchronous reader
/// on a database connection's thread (the batch route's ingest), holding at most about
/// `capacity` bytes: the sender waits (without blocking a thread) while it is full, the receiver
/// blocks its own thread while it is empty. So the body moves at the pace the ledger applies it,
/// and the connection's backpressure reaches the client.
final class BodyPipe: @unchecked Sendable {
    // @unchecked: every stored property is only touched while `condition` is locked.
    private let condition = NSCondition()
    private let capacity: Int
    private var chunks: [ByteBuffer] = []
    private var buffered = 0
    /// How many of `chunks` hold a newline.
    private var chunksWithNewline = 0
    private var ended = false
    private var failure: (any Error)?
    private var closed = false
    private var sender: CheckedContinuation<Void, Never>?

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Hands a chunk to the receiver, waiting while the pipe is full; false once the receiver
    /// closed the pipe (the chunk is dropped).
    func send(_ chunk: ByteBuffer) async -> Bool {
        let full = condition.withLock {
            guard !closed else { return false }
            if chunk.readableBytesView.contains(UInt8(ascii: "\n")) { chunksWithNewline += 1 }
            chunks.append(chunk)
            buffered += chunk.readableBytes
            condition.signal()
            return buffered >= capacity
        }
        if full {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let wait = condition.withLock {
                    guard !closed && buffered >= capacity else { return false }
                    sender = continuation
                    return true
                }
                if !wait { continuation.resume() }
            }
        }
        return condition.withLock { !closed }
    }

    /// The body ended, or could not be read (`failure`, which the receiver then throws).
    func finish(throwing failure: (any Error)? = nil) {
        condition.withLock {
            ended = true
            self.failure = failure
            condition.signal()
        }
    }

    /// The receiver is done: chunks sent later are dropped, and a waiting sender goes on.
    func close() {
        let waiting = condition.withLock {
            closed = true
            chunks = []
            buffered = 0
            chunksWithNewline = 0
            defer { sender = nil }
            return sender
        }
        waiting?.resume()
    }

    /// The next chunk, blocking the calling thread until one comes; nil at the end of the body.
    /// Throws the error the body ended with.
    func receive() throws -> ByteBuffer? {
        let (chunk, waiting): (ByteBuffer?, CheckedContinuation<Void, Never>?) = try condition.withLock {
            while chunks.isEmpty && !ended { condition.wait() }
            guard !chunks.isEmpty else {
                if let failure { throw failure }
                return (nil, nil)
            }
            let chunk = chunks.removeFirst()
            buffered -= chunk.readableBytes
            if chunk.readableBytesView.contains(UInt8(ascii: "\n")) { chunksWithNewline -= 1 }
            guard buffered < capacity, let sender else { return (chunk, nil) }
            self.sender = nil
            return (chunk, sender)
        }
        waiting?.resume()
        return chunk
    }

    /// Whether `receive()` would bring a newline or the body's end without waiting for the
    /// client. Not for a body that failed: the lines before the failure are applied first.
    var hasNewlineOrEnd: Bool {
        condition.withLock { chunksWithNewline > 0 || (ended && failure == nil) }
    }
}
