import Foundation
import PurchaseLedger
import Testing

/// The line limit of `ledger ingest` holds wherever a line falls in the input: refused one byte
/// over the limit and accepted at it, also when the whole line arrived in one read (refusing
/// only a line that outgrows the unread buffer would let up to ~5 MiB through, depending on its
/// offset in the file's 1 MiB reads). HostileInputTests checks the real 4 MiB limit inside a
/// large file.
@Suite("The line length limit")
struct LineLimitTests {
    @Test func aLineOverTheLimitIsRefusedEvenWhenItArrivedInOneRead() throws {
        let limit = 16, offset = 7
        let lines = [String(repeating: "o", count: offset), String(repeating: "a", count: limit),
                     String(repeating: "b", count: limit + 1), String(repeating: "c", count: 3 * limit), "d"]
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("lines.ndjson")
        try (lines.joined(separator: "\n")).write(toFile: path, atomically: true, encoding: .utf8)
        let descriptor = open(path, O_RDONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var reader = LineReader(descriptor: descriptor, maxLineBytes: limit)
        var seen: [String] = []
        for _ in 0..<10 {
            guard let line = try reader.next() else { break }
            switch line {
            case .text(let bytes): seen.append("text \(bytes.count)")
            case .tooLong(let bytes): seen.append("tooLong \(bytes)")
            }
        }
        #expect(seen == ["text \(offset)", "text \(limit)", "tooLong \(limit + 1)", "tooLong \(3 * limit)", "text 1"])
        #expect(reader.lineNumber == 5)
    }
}
