import Foundation

/// Standard error and whether the standard streams are terminals.
enum Terminal {
    /// Prints `message` on one line to standard error and exits with `status`.
    static func fail(_ message: String, status: Int32 = 2) -> Never {
        let line = message.split(separator: "\n", omittingEmptySubsequences: true).joined(separator: " ")
        FileHandle.standardError.write(Data((line + "\n").utf8))
        exit(status)
    }

    static var isTerminal: Bool { isatty(STDOUT_FILENO) != 0 }
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }
}
