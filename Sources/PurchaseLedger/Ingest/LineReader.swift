#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads newline-delimited input from a file descriptor in large chunks, without holding more
/// than one chunk and one line in memory. A line longer than `maxLineBytes` is not kept: it is
/// reported as `.tooLong` and skipped to its end.
public struct LineReader {
    /// One line of input.
    public enum Line {
        /// The line's bytes without the newline (a trailing `\r` is removed too).
        case text(ArraySlice<UInt8>)
        /// A line over the limit, with its length in bytes.
        case tooLong(Int)
    }

    private let descriptor: Int32
    private let maxLineBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEOF = false
    private var overflow: Int?
    /// The number of the line last returned, counting from 1.
    public private(set) var lineNumber = 0

    public init(descriptor: Int32, maxLineBytes: Int = 4 << 20) {
        self.descriptor = descriptor
        self.maxLineBytes = maxLineBytes
    }

    /// Whether a complete line is already buffered, so that `next()` will not block on input.
    public var hasBufferedLine: Bool {
        buffer[start...].contains(UInt8(ascii: "\n")) || (atEOF && start < buffer.count)
    }

    /// The next line, or nil at the end of input.
    public mutating func next() throws -> Line? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                var end = newline
                let lineStart = start
                start = newline + 1
                if let skipped = overflow {
                    overflow = nil
                    lineNumber += 1
                    return .tooLong(skipped + (newline - lineStart))
                }
                lineNumber += 1
                // Also when the whole line arrived in one read: the limit must not depend on
                // where the line falls in the input's chunks.
                if newline - lineStart > maxLineBytes { return .tooLong(newline - lineStart) }
                if end > lineStart, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                return .text(buffer[lineStart..<end])
            }
            if atEOF {
                guard start < buffer.count || overflow != nil else { return nil }
                lineNumber += 1
                defer { start = buffer.count; overflow = nil }
                if let skipped = overflow { return .tooLong(skipped + buffer.count - start) }
                if buffer.count - start > maxLineBytes { return .tooLong(buffer.count - start) }
                return .text(buffer[start...])
            }
            // Keep the unfinished line, drop what was returned, and read more.
            if start > 0 {
                buffer.removeSubrange(0..<start)
                start = 0
            }
            if buffer.count > maxLineBytes {
                overflow = (overflow ?? 0) + buffer.count
                buffer.removeAll(keepingCapacity: true)
            }
            try fill()
        }
    }

    private mutating func fill() throws {
        let chunk = 1 << 20
        let old = buffer.count
        buffer.reserveCapacity(old + chunk)
        buffer.append(contentsOf: repeatElement(0, count: chunk))
        var count = 0
        repeat {
            count = buffer.withUnsafeMutableBytes { raw in
                read(descriptor, raw.baseAddress! + old, chunk)
            }
        } while count < 0 && errno == EINTR
        guard count >= 0 else {
            buffer.removeSubrange(old...)
            throw InputError(message: "cannot read the input: \(String(cString: strerror(errno)))")
        }
        buffer.removeSubrange((old + count)...)
        if count == 0 { atEOF = true }
    }
}

/// The input could not be read.
public struct InputError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
