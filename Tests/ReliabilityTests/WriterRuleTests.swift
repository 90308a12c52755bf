import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing
import LedgerJSON

/// The rules for -0 and for the years 0001 to 9999 as a direct `ledger_writer` call sees them
/// (`Schema/definitions/commands/field_invalid.sql`, checked by `ledger.apply_payments`).
@Suite("A writer's direct call follows the rules for -0 and the years 0001 to 9999")
struct WriterRuleTests {
    @Test
    func aWriterRecordsAPriceOfMinusZeroAsZero() async throws {
        try await Self.withWriter { writer, db in
            for (seq, price) in [("P-1", "-0"), ("P-2", "-0.00")] {
                let row = try writer.query("SELECT status, message FROM ledger.record_payment('purchase', \(Self.event(seq: seq, price: price))::jsonb)")[0]
                let message = try row.decode("message", as: String?.self) ?? ""
                #expect(try row.decode("status", as: String.self) == "recorded", "\(price): \(message)")
            }
            let again = try writer.query("SELECT status FROM ledger.record_payment('purchase', \(Self.event(seq: "P-1", price: "0"))::jsonb)")[0]
            #expect(try again.decode("status", as: String.self) == "duplicate")
            #expect(try db.withConnection { try $0.count("SELECT count(*) FROM ledger.payments WHERE price = 0") } == 2)
        }
    }

    @Test(arguments: [
              ("purchaseTime", "9999-12-31T23:59:59.9999999Z"), ("purchaseTime", "10000-01-01T00:00:00Z"),
              ("purchaseTime", "0001-12-31T23:59:59Z BC"), ("expiryTime", "10000-01-01T00:00:00Z"),
              ("expiryTime", "9999-12-31T23:59:59.9999996Z"),
          ])
    func aWriterCannotRecordATimeOutsideTheYears1To9999(field: String, time: String) async throws {
        try await Self.withWriter { writer, db in
            let event = Self.event(seq: "S-1", price: "0.99", type: "AUTO_RENEWABLE",
                                   purchase: field == "purchaseTime" ? time : "2026-01-01T00:00:00Z",
                                   expiry: field == "expiryTime" ? time : "2026-02-01T00:00:00Z")
            let row = try writer.query("SELECT status, code, message FROM ledger.record_payment('purchase', \(event)::jsonb)")[0]
            #expect(try row.decode("status", as: String.self) == "rejected", "\(field) = \(time) was recorded")
            #expect(try row.decode("code", as: String?.self) == "INVALID_INPUT")
            #expect((try row.decode("message", as: String?.self) ?? "").contains(" \(field) "))
            #expect(try db.withConnection { try $0.count("SELECT count(*) FROM ledger.events") } == 0)
        }
    }

    static func withWriter(_ body: (Connection, TestDatabase) throws -> Void) async throws {
        try await TestDatabase.with { db in
            try await LoginRoles.with(db) { roles in
                let writer = try roles.connect(roles.writer)
                defer { writer.close() }
                try body(writer, db)
            }
        }
    }

    /// A payment event as the library writes it.
    static func event(seq: String, price: String, type: String = "CONSUMABLE",
                      purchase: String = "2026-01-01T00:00:00Z", expiry: String? = nil) -> String {
        var w = JSONWriter()
        w.beginObject()
        for (key, value) in [("userId", "u1"), ("storeCode", "AS"), ("productId", "gem_100"), ("productType", type),
                             ("price", price), ("currency", "USD"), ("paymentSeq", seq), ("transactionId", "T-\(seq)"),
                             ("purchaseTime", purchase), ("purchaseTokenSha256", String(repeating: "ab", count: 32))] {
            w.field(key, value)
        }
        w.field("expiryTime", expiry)
        w.field("sandboxPayment", false)
        w.field("promotionPayment", false)
        w.endObject()
        return w.string
    }
}
