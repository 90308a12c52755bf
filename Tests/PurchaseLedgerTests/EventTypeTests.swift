import LedgerDemo
import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// One list of event types: what the SQL functions append, what project_range applies,
/// `EventType` and Schema/EVENTS.md name the same types.
@Suite("Event types")
struct EventTypeTests {
    static let schema = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Schema")

    /// The quoted CamelCase literals of a text that are event types: 'PurchaseRecorded', ...
    static func literals(_ text: String) -> Set<String> {
        Set(text.matches(of: /'([A-Z][a-z]+(?:[A-Z][a-z]+)+)'/).map { String($0.output.1) })
    }

    @Test func theDefinitionsEventTypeAndEventsMarkdownNameTheSameTypes() throws {
        let all = Set(EventType.allCases.map(\.rawValue))
        let commands = Definition.all.filter { $0.group == "commands" }.map(\.sql).joined(separator: "\n")
        // What the commands append (types are the only CamelCase literals in their bodies).
        #expect(Self.literals(commands) == all, "appended but not in EventType: \(Self.literals(commands).subtracting(all)); never appended: \(all.subtracting(Self.literals(commands)))")
        // Every type but the restore's items is applied by project_range.
        let projectRange = try #require(Definition.all.first { $0.path == "projections/install_project_range.sql" }).sql
        #expect(Self.literals(projectRange) == all)
        let markdown = try String(contentsOf: Self.schema.appendingPathComponent("EVENTS.md"), encoding: .utf8)
        let documented = Set(markdown.matches(of: /^\| `([A-Za-z]+)` \| `([a-z]+):/.anchorsMatchLineEndings()).map { String($0.output.1) })
        #expect(documented == all)
        for type in EventType.allCases {
            #expect(markdown.contains("| `\(type.rawValue)` | `\(type.streamPrefix)"), "\(type) is documented with another stream")
        }
    }

    @Test func everyEventOfADemoAndOfTheStoresIsAKnownTypeOnItsStream() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                _ = try c.ingest(Array(DemoGenerator(seed: 8, users: 40)))
                let mint = AppleMint()
                _ = try c.ingest(EntitledAnalyticsTests.histories(mint) + [
                    #"{"type":"product","storeCode":"GG","productId":"gems","productType":"CONSUMABLE"}"#,
                ], stores: mint.stores)
                var seen: Set<EventType> = []
                for row in try c.query("SELECT type, stream FROM ledger.events ORDER BY position") {
                    let (text, stream) = (try row.decode("type", as: String.self), try row.decode("stream", as: String.self))
                    let type = try #require(EventType(rawValue: text), "unknown type \(text)")
                    #expect(stream.hasPrefix(type.streamPrefix), "\(text) on \(stream)")
                    seen.insert(type)
                }
                #expect(seen.count >= 12, "\(seen)")
            }
        }
    }
}
