import Foundation

/// Buffers output and writes it in large blocks.
struct OutputBuffer {
    private var bytes: [UInt8] = []
    let descriptor: Int32

    init(descriptor: Int32 = STDOUT_FILENO) {
        self.descriptor = descriptor
    }

    mutating func line(_ text: String) {
        bytes.append(contentsOf: text.utf8)
        bytes.append(UInt8(ascii: "\n"))
        if bytes.count > 1 << 16 { flush() }
    }

    mutating func flush() {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
        bytes.removeAll(keepingCapacity: true)
    }
}
