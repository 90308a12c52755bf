/// Where `Ingestor` reads its lines from: a file or pipe (`LineReader`), or a generator.
public protocol LineSource {
    /// The next line, or nil at the end.
    mutating func next() throws -> LineReader.Line?
    /// The number of the line last returned, from 1.
    var lineNumber: Int { get }
    /// Whether the next line is available without waiting for input.
    var hasBufferedLine: Bool { get }
}

extension LineReader: LineSource {}
