import Foundation
import LedgerTestSupport

/// An NDJSON file read as `ledger ingest` reads it: lines split at `\n` only, numbered from 1.
struct NDJSONFile {
    var lines: [[UInt8]]

    init(path: String) throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        if lines.last?.isEmpty == true { lines.removeLast() }
        self.lines = lines
    }

    init(lines: [String]) {
        self.lines = lines.map { Array($0.utf8) }
    }

    /// The `type` of each line's command, when the line is a JSON object with one.
    var types: [String?] {
        lines.map { line in
            (try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])?["type"] as? String
        }
    }

    func write(to path: String) throws {
        var data = Data()
        for line in lines {
            data.append(contentsOf: line)
            data.append(0x0A)
        }
        try data.write(to: URL(fileURLWithPath: path))
    }
}
