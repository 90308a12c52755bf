import Foundation

// Foundation's FileHandle reads and writes trap on EINTR and EPIPE (they `try!` internally), and
// child processes, signals and early exits make both happen in these tests: use the system calls.

/// Reads what is available, at least one byte, retrying on EINTR; empty at end of file.
public func readChunk(_ handle: FileHandle) -> Data {
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
        if count >= 0 { return Data(buffer[0..<count]) }
        if errno != EINTR { return Data() }
    }
}

/// Reads to end of file.
public func readAll(_ handle: FileHandle) -> Data {
    var data = Data()
    while true {
        let chunk = readChunk(handle)
        if chunk.isEmpty { return data }
        data.append(chunk)
    }
}

/// Writes all of `data`, retrying on EINTR; stops quietly when the reader went away (EPIPE).
public func writeAll(_ handle: FileHandle, _ data: Data) {
    data.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let written = write(handle.fileDescriptor, raw.baseAddress! + offset, raw.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}
