import NIOCore
import PurchaseLedger

/// The lines of a request body as it arrives through a ``BodyPipe``, read as `ledger ingest`
/// reads a file (`LineReader`): numbered from 1, blank ones included, a trailing `\r` removed,
/// the last line counted without a newline, and a line over 4 MiB reported as too long and
/// skipped to its end without being kept. Holds the unfinished line and what the pipe holds,
/// never the body. `next()` blocks its thread while the client has not sent the next line.
struct BodyLines: LineSource {
    private let pipe: BodyPipe
    private let maxLineBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    /// The bytes of a too-long line dropped so far.
    private var overflow: Int?
    private(set) var lineNumber = 0

    init(_ pipe: BodyPipe, maxLineBytes: Int = 4 << 20) {
        self.pipe = pipe
        self.maxLineBytes = maxLineBytes
    }

    var hasBufferedLine: Bool {
        buffer[start...].contains(UInt8(ascii: "\n")) || (atEnd && (start < buffer.count || overflow != nil))
            || (!atEnd && pipe.hasNewlineOrEnd)
    }

    mutating func next() throws -> LineReader.Line? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let lineStart = start
                start = newline + 1
                lineNumber += 1
                if let skipped = overflow {
                    overflow = nil
                    return .tooLong(skipped + (newline - lineStart))
                }
                if newline - lineStart > maxLineBytes { return .tooLong(newline - lineStart) }
                var end = newline
                if end > lineStart, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                return .text(buffer[lineStart..<end])
            }
            if atEnd {
                guard start < buffer.count || overflow != nil else { return nil }
                lineNumber += 1
                defer { start = buffer.count; overflow = nil }
                if let skipped = overflow { return .tooLong(skipped + buffer.count - start) }
                if buffer.count - start > maxLineBytes { return .tooLong(buffer.count - start) }
                return .text(buffer[start...])
            }
            // Keep the unfinished line, drop what was returned, and take the next chunk.
            if start > 0 {
                buffer.removeSubrange(0..<start)
                start = 0
            }
            if buffer.count > maxLineBytes {
                overflow = (overflow ?? 0) + buffer.count
                buffer.removeAll(keepingCapacity: true)
            }
            if let chunk = try pipe.receive() {
                buffer.append(contentsOf: chunk.readableBytesView)
            } else {
                atEnd = true
            }
        }
    }
}
