import LedgerDemo
import PurchaseLedger

/// Feeds generated lines to the ingestor as if they came from a file.
struct GeneratedLines: LineSource {
    var generator: DemoGenerator
    var lineNumber = 0
    var hasBufferedLine: Bool { true }

    init(_ generator: DemoGenerator) { self.generator = generator }

    mutating func next() throws -> LineReader.Line? {
        guard let line = generator.next() else { return nil }
        lineNumber += 1
        return .text(ArraySlice(line.utf8))
    }
}
