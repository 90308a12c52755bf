import Logging
import Synchronization

/// Keeps every record logged through its loggers, for tests that check what the library logs.
public final class LogCapture: Sendable {
    /// One record: its level, message and metadata as text.
    public struct Record: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]
    }

    private let storage = Mutex<[Record]>([])

    public init() {}

    /// The records so far, in order.
    public var records: [Record] { storage.withLock { $0 } }

    /// Each record as one line of text, `LEVEL MESSAGE key=value…` (metadata sorted by key), to
    /// check what was logged and what never was.
    public var all: [String] {
        records.map { record in
            "\(record.level) \(record.message) "
                + record.metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
    }

    /// A logger at `level` whose records this capture keeps.
    public func logger(level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: "test", factory: { _ in Handler(capture: self) })
        logger.logLevel = level
        return logger
    }

    fileprivate func append(_ record: Record) {
        storage.withLock { $0.append(record) }
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            capture.append(Record(level: event.level, message: event.message.description,
                                  metadata: all.mapValues { "\($0)" }))
        }
    }
}
