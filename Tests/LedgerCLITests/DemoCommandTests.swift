import LedgerDemo
import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

@Suite("ledger demo")
struct DemoCommandTests {
    @Test func writeStreamsTheSameLinesForTheSameSeed() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = dir.appendingPathComponent("a.ndjson").path, b = dir.appendingPathComponent("b.ndjson").path
        #expect(try LedgerProcess.run(["demo", "--write", a, "--events", "20000"]).status == 0)
        #expect(try LedgerProcess.run(["demo", "--write", b, "--events", "20000"]).status == 0)
        let text = try String(contentsOfFile: a, encoding: .utf8)
        #expect(text == (try String(contentsOfFile: b, encoding: .utf8)))
        let lines = text.split(separator: "\n")
        #expect(lines.count >= 20000 && lines.count < 20200)
        var types: [String: Int] = [:]
        for line in lines {
            let object = try jsonObject(String(line))
            types[object["type"] as? String ?? "?", default: 0] += 1
        }
        for type in ["purchase", "renewal", "consume", "refund", "cancel", "restore"] {
            #expect(types[type, default: 0] > 0, "no \(type) lines")
        }
    }

    @Test func demoIngestsAndShowsTheShowcaseUser() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let out = try LedgerProcess.run(["demo", "--users", "200", "--database-url", db.conninfo])
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stdout.contains(DemoGenerator.showcaseUser))
            #expect(out.stdout.contains("unconsumed"))
            try db.withConnection { c throws in
                #expect(try c.count("SELECT count(*) FROM ledger.events") > 1000)
                #expect(try UnconsumedPayment.fetchAll(c, userId: DemoGenerator.showcaseUser).count == 3)
                #expect(try Subscription.fetchAll(c, userId: DemoGenerator.showcaseUser, at: DemoGenerator.clock.date).count == 2)
            }
            // Running it again changes no payment: every line is a replay (restores are new events).
            let payments = "SELECT md5(string_agg(p::text, ',' ORDER BY payment_seq)) AS h FROM ledger.payments p"
            let before = try db.withConnection { try $0.query(SQL(unsafeSQL: payments))[0].decode("h", as: String.self) }
            #expect(try LedgerProcess.run(["demo", "--users", "200", "--database-url", db.conninfo]).status == 0)
            let after = try db.withConnection { try $0.query(SQL(unsafeSQL: payments))[0].decode("h", as: String.self) }
            #expect(after == before)
        }
    }
}
