import LedgerJSON
import PurchaseLedger

extension Verify {
    func printText(_ report: VerifyReport) {
        if report.isEqual {
            print("the projections equal a replay of \(report.events) events (positions up to \(report.lastPosition))")
            return
        }
        let counts = report.differingRows.filter { $0.value > 0 }.sorted { $0.key < $1.key }
            .map { "\($0.value) in \($0.key)" }.joined(separator: ", ")
        print("the projections differ from a replay of \(report.events) events (positions up to \(report.lastPosition)): "
              + "differing rows: \(counts)")
        print(Table(["table", "row", "column", "live", "replayed"], report.differences.map { d in
            switch d.kind {
            case .changed: [d.table, d.rowDescription, d.column ?? "(row)", d.live ?? "null", d.replayed ?? "null"]
            case .missing: [d.table, d.rowDescription, "(row)", "missing", "present"]
            case .extra: [d.table, d.rowDescription, "(row)", "present", "missing"]
            }
        }).render(empty: "no differences"))
    }

    func printJSON(_ report: VerifyReport) {
        var w = JSONWriter()
        w.beginArray()
        for d in report.differences {
            w.beginObject()
            w.field("table", d.table)
            w.key("key")
            w.beginObject()
            for part in d.key { w.field(part.column, part.value) }
            w.endObject()
            w.field("userId", d.userId)
            w.field("kind", d.kind.rawValue)
            w.field("column", d.column)
            w.field("live", d.live)
            w.field("replayed", d.replayed)
            w.endObject()
        }
        w.endArray()
        print(w.string)
    }

    func printText(_ report: ChainReport) {
        guard let first = report.breaks.first else {
            print("the hash chains hold: \(report.events) events in \(report.streams) streams")
            return
        }
        print("the hash chains are broken (\(report.events) events in \(report.streams) streams checked): "
              + "first at \(Self.place(first)): \(first.detail)")
        print(Table(["position", "stream", "version", "problem", "detail"], report.breaks.map {
            [$0.position.map(String.init) ?? "-", $0.stream, $0.version.map(String.init) ?? "-", $0.problem.rawValue, $0.detail]
        }).render(empty: "no breaks"))
    }

    func printJSON(_ report: ChainReport) {
        var w = JSONWriter()
        w.beginArray()
        for b in report.breaks {
            w.beginObject()
            w.key("position")
            if let position = b.position { w.rawNumber(String(position)) } else { w.null() }
            w.field("stream", b.stream)
            w.key("version")
            if let version = b.version { w.int(version) } else { w.null() }
            w.field("problem", b.problem.rawValue)
            w.field("detail", b.detail)
            w.endObject()
        }
        w.endArray()
        print(w.string)
    }

    static func place(_ b: ChainBreak) -> String {
        let version = b.version.map { " version \($0)" } ?? ""
        return (b.position.map { "position \($0), " } ?? "") + "stream \(b.stream)\(version)"
    }
}
