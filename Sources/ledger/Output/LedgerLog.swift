import Foundation
import Logging

/// The command's log: swift-log records (retries, reconnects, the rebuild's swap attempts) on
/// standard error, at the level `LEDGER_LOG_LEVEL` names (default `notice`).
enum LedgerLog {
    /// The level when `LEDGER_LOG_LEVEL` is unset.
    static let defaultLevel = Logger.Level.notice

    /// Sends every logger's records to standard error at the chosen level. A value that names
    /// no level is a usage error.
    static func bootstrap(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let level: Logger.Level
        if let text = environment["LEDGER_LOG_LEVEL"], !text.isEmpty {
            guard let named = Logger.Level(rawValue: text.lowercased()) else {
                let levels = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
                throw LevelError(description: "LEDGER_LOG_LEVEL: expected one of \(levels), got '\(text.prefix(40))'")
            }
            level = named
        } else {
            level = defaultLevel
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }

    /// `LEDGER_LOG_LEVEL` names no level (a usage error, exit 2).
    struct LevelError: Error, CustomStringConvertible {
        var description: String
    }

    /// The logger the commands hand to the library.
    static var logger: Logger { Logger(label: "ledger") }
}
