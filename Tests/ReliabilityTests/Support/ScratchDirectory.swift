import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A folder under /tmp that is deleted when the test is done with it.
struct ScratchDirectory {
    let url: URL

    init() throws {
        var template = Array("/tmp/lrt-XXXXXX".utf8CString)
        guard let path = mkdtemp(&template) else { throw POSIXError(.EIO) }
        url = URL(fileURLWithPath: String(cString: path))
    }

    func file(_ name: String) -> String { url.appendingPathComponent(name).path }

    func remove() { try? FileManager.default.removeItem(at: url) }
}
