import Foundation
import LedgerJSON
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// The contract's field rules hold alike for the library and for a direct `ledger_writer` call:
/// every invalid payment is refused naming its field, and nothing is written. Both sides read
/// the same rules (`Schema/definitions/rules/field_rules.json`): the decoder through
/// `FieldRules`, `ledger.apply_payments` (`ledger.field_invalid` over `ledger.field_rules`).
@Suite("Payment rules: the library and a direct writer call refuse the same payments")
struct PaymentRuleTests {
    /// One invalid payment: the changes to a valid purchase line (nil removes a field) and to a
    /// valid command as a direct caller sends it (nil: that side has no such case), the field
    /// named, and the library's code (the contract's UNKNOWN_STORE and UNKNOWN_PRODUCT_TYPE for
    /// an unknown store or type; the database answers INVALID_INPUT).
    struct Case: CustomStringConvertible, Sendable {
        let field: String
        let line: [String: String?]?
        let command: [String: String?]?
        var code: LedgerError.Code = .invalidInput
        var description: String { "\(field): line \(line.map { "\($0)" } ?? "-"), command \(command.map { "\($0)" } ?? "-")" }
    }

    static func quoted(_ text: String) -> String { "\"" + text + "\"" }
    static func long(_ count: Int, _ character: String = "é") -> String { quoted(String(repeating: character, count: count)) }
    static let subscription: [String: String?] = ["productType": quoted("AUTO_RENEWABLE"), "expiryTime": quoted("2026-02-01T00:00:00Z")]

    /// The same change on both sides.
    static func both(_ field: String, _ value: String?, code: LedgerError.Code = .invalidInput,
                     plus extra: [String: String?] = [:]) -> Case {
        Case(field: field, line: extra.merging([field: value]) { $1 }, command: extra.merging([field: value]) { $1 }, code: code)
    }

    static let cases: [Case] = {
        var cases: [Case] = []
        // Missing.
        for field in ["userId", "storeCode", "productId", "productType", "price", "currency", "paymentSeq",
                      "transactionId", "purchaseTime"] {
            cases.append(both(field, nil))
        }
        cases.append(Case(field: "purchaseToken", line: ["purchaseToken": nil], command: ["purchaseTokenSha256": nil]))
        cases.append(Case(field: "sandboxPayment", line: nil, command: ["sandboxPayment": nil]))     // a line's default is false
        cases.append(Case(field: "promotionPayment", line: nil, command: ["promotionPayment": nil]))
        cases.append(both("expiryTime", nil, plus: subscription))
        // Of the wrong type.
        for (field, value) in [("userId", "5"), ("storeCode", "1"), ("productId", "true"), ("price", "true"),
                               ("currency", "840"), ("paymentSeq", "[]"), ("transactionId", "{}"),
                               ("originalTransactionId", "7"), ("sandboxPayment", quoted("yes")), ("promotionPayment", "1"),
                               ("purchaseTime", "true"), ("payload", "5"), ("productSeq", quoted("7"))] {
            cases.append(both(field, value))
        }
        cases.append(both("productType", "[]"))
        cases.append(both("expiryTime", "true", plus: subscription))
        cases.append(Case(field: "purchaseToken", line: ["purchaseToken": "5"], command: ["purchaseTokenSha256": "5"]))
        // Too long (in characters; the payload in bytes of UTF-8).
        for (field, limit) in [("userId", 128), ("productId", 255), ("paymentSeq", 128), ("transactionId", 255),
                               ("originalTransactionId", 255)] {
            cases.append(both(field, long(limit + 1)))
        }
        cases.append(both("payload", quoted(String(repeating: "a", count: 65_535) + "é")))
        cases.append(both("price", quoted(String(repeating: "1", count: 129))))
        cases.append(both("currency", quoted("USDX")))
        cases.append(Case(field: "purchaseToken", line: ["purchaseToken": long(4097)], command: nil))
        // Not one of the allowed values.
        cases.append(Case(field: "storeCode", line: ["storeCode": quoted("ZZ")], command: ["storeCode": quoted("ZZ")], code: .unknownStore))
        cases.append(Case(field: "productType", line: ["productType": quoted("FOO")], command: ["productType": quoted("FOO")],
                          code: .unknownProductType))
        // Bad prices, currencies and token digests.
        for price in ["-5", ".5", "1.", "abc", "1.2.3", "-", "007", "00.5"] { cases.append(both("price", quoted(price))) }
        // Text that is not a time as the library reads one (named as the field, not a cast that
        // fails the statement).
        for time in ["garbage", "2026-02-30T00:00:00Z", "2026-01-01", "2026-01-01T00:00:00", "2026-01-01T25:00:00Z",
                     "2026-01-01T00:00:00.1234567890Z", "2026-01-01T00:00:00+24:00"] {
            cases.append(both("purchaseTime", quoted(time)))
        }
        for currency in ["usd", "US", "U$D"] { cases.append(both("currency", quoted(currency))) }
        for digest in ["", "00", String(repeating: "zz", count: 32), String(repeating: "a", count: 65)] {
            cases.append(Case(field: "purchaseToken", line: nil, command: ["purchaseTokenSha256": quoted(digest)]))
        }
        // Times outside the years 0001 to 9999, and expiries the product type forbids.
        // (PostgreSQL reads no year 0: before the year 0001 a direct caller writes BC.)
        for (line, command) in [("10000-01-01T00:00:00Z", "10000-01-01T00:00:00Z"), ("0000-12-31T00:00:00Z", "0001-12-31T00:00:00Z BC")] {
            cases.append(Case(field: "purchaseTime", line: ["purchaseTime": quoted(line)], command: ["purchaseTime": quoted(command)]))
            cases.append(Case(field: "expiryTime", line: subscription.merging(["expiryTime": quoted(line)]) { $1 },
                              command: subscription.merging(["expiryTime": quoted(command)]) { $1 }))
        }
        cases.append(both("expiryTime", quoted("2025-12-31T00:00:00Z"), plus: subscription))
        cases.append(both("expiryTime", quoted("2026-01-01T00:00:00Z"), plus: subscription))
        cases.append(both("expiryTime", quoted("2026-02-01T00:00:00Z")))
        cases.append(both("productSeq", "1.5"))
        cases.append(both("productSeq", "9223372036854775808"))
        return cases
    }()

    /// A valid command as a direct caller sends it (the fields `Payment.commandFields()` writes).
    static let validCommand: [(String, String)] = [
        ("userId", quoted("u1")), ("storeCode", quoted("AS")), ("productId", quoted("gem_100")),
        ("productType", quoted("CONSUMABLE")), ("price", quoted("0.99")), ("currency", quoted("USD")),
        ("paymentSeq", quoted("P-1")), ("transactionId", quoted("T-1")), ("originalTransactionId", "null"),
        ("purchaseTime", quoted("2026-01-01T00:00:00.000000Z")), ("expiryTime", "null"), ("payload", "null"),
        ("sandboxPayment", "false"), ("promotionPayment", "false"), ("productSeq", "null"),
        ("purchaseTokenSha256", quoted(String(repeating: "ab", count: 32))),
    ]

    static func command(_ changes: [String: String?]) -> String {
        Fixture.object(validCommand, with: changes)
    }

    /// The library's answer to a line: its decoder's refusal, else what `Ledger.execute` returns.
    static func execute(_ line: String, on ledger: Ledger) async throws -> CommandOutcome {
        do {
            return try await ledger.execute(try LedgerCommand(line: Array(line.utf8)))
        } catch let error as LedgerError {
            return CommandOutcome(rejected: error)
        }
    }

    /// A direct call of `ledger.record_payment` as the writer: (status, code, message).
    static func record(_ command: String, as writer: Connection) throws -> (String, String?, String) {
        let row = try writer.query("SELECT status, code, message FROM ledger.record_payment('purchase', \(JSONB(text: command))::jsonb)")[0]
        return (try row.decode("status"), try row.decode("code"), try row.decode("message", as: String?.self) ?? "")
    }

    @Test func everyInvalidPaymentIsRefusedNamingItsFieldByTheLibraryAndByADirectWriterCall() async throws {
        try await TestDatabase.with { db in
            try await LoginRoles.with(db) { roles in
                let writer = try roles.connect(roles.writer)
                defer { writer.close() }
                let ledger = Ledger(databaseURL: db.conninfo, poolSize: 1)
                let events = { try db.withConnection { try $0.count("SELECT count(*) FROM ledger.events") } }
                for rule in Self.cases {
                    if let changes = rule.line {
                        let outcome = try await Self.execute(Fixture.purchaseLine(changes), on: ledger)
                        #expect(outcome.status == .rejected, "library recorded \(rule)")
                        #expect(outcome.error?.code == rule.code, "library: \(rule): \(outcome.error?.message ?? "")")
                        #expect(outcome.error?.message.contains(rule.field) == true, "library: \(rule): \(outcome.error?.message ?? "")")
                    }
                    if let changes = rule.command {
                        let (status, code, message) = try Self.record(Self.command(changes), as: writer)
                        #expect(status == "rejected" && code == "INVALID_INPUT", "writer: \(rule): \(status) \(message)")
                        #expect(message.contains(" \(rule.field) "), "writer: \(rule): \(message)")
                    }
                    #expect(try events() == 0, "\(rule) wrote an event")
                }
                await ledger.close()
            }
        }
    }

    /// A renewal names its lineage, and a payment is a purchase or a renewal: the library's
    /// rules for a line's `type`, held by a direct call too.
    @Test func aDirectRenewalWithoutItsLineageOrAnUnknownKindIsRefusedAndWritesNothing() async throws {
        try await TestDatabase.with { db in
            try await LoginRoles.with(db) { roles in
                let writer = try roles.connect(roles.writer)
                defer { writer.close() }
                let subscription = Self.command(["productType": Self.quoted("AUTO_RENEWABLE"),
                                                 "expiryTime": Self.quoted("2026-02-01T00:00:00.000000Z")])
                for (kind, field) in [("renewal", "originalTransactionId"), ("gift", "kind")] {
                    let row = try writer.query("SELECT status, code, message FROM ledger.record_payment(\(kind), \(JSONB(text: subscription))::jsonb)")[0]
                    let message = try row.decode("message", as: String?.self) ?? ""
                    #expect(try row.decode("status", as: String.self) == "rejected", "\(kind)")
                    #expect(try row.decode("code", as: String?.self) == "INVALID_INPUT" && message.contains(" \(field) "), "\(kind): \(message)")
                }
                let ledger = Ledger(databaseURL: db.conninfo, poolSize: 1)
                let line = Fixture.purchaseLine(["type": Self.quoted("renewal"), "productType": Self.quoted("AUTO_RENEWABLE"),
                                                 "expiryTime": Self.quoted("2026-02-01T00:00:00Z")])
                let outcome = try await Self.execute(line, on: ledger)
                await ledger.close()
                #expect(outcome.error?.code == .invalidInput && outcome.error?.message.contains("originalTransactionId") == true,
                        "\(outcome.error?.message ?? "recorded")")
                #expect(try db.withConnection { try $0.count("SELECT count(*) FROM ledger.events") } == 0)
                // The same subscription as a purchase is recorded: the refusals above were about the kind.
                #expect(try Self.record(subscription, as: writer).0 == "recorded")
            }
        }
    }

    /// A restore's items go through the same check, and through the restore's own rule that
    /// every item is the restoring user's on its store.
    @Test func aDirectRestoreRefusesAnItemThatBreaksARuleAndWritesNothing() async throws {
        try await TestDatabase.with { db in
            try await LoginRoles.with(db) { roles in
                let writer = try roles.connect(roles.writer)
                defer { writer.close() }
                for (changes, field) in [(["userId": Self.long(129)], "userId"), (["currency": Self.quoted("usd")], "currency"),
                                         (["userId": Self.quoted("u2")], "userId"), (["storeCode": Self.quoted("GG")], "storeCode")] {
                    let items = "[{\"kind\":\"purchase\",\"data\":\(Self.command(["paymentSeq": Self.quoted("P-0"), "transactionId": Self.quoted("T-0")]))},"
                        + "{\"kind\":\"purchase\",\"data\":\(Self.command(changes))}]"
                    let row = try writer.query("SELECT status, code, message FROM ledger.restore('u1', 'AS', now(), \(JSONB(text: items))::jsonb)")[0]
                    let message = try row.decode("message", as: String?.self) ?? ""
                    #expect(try row.decode("status", as: String.self) == "rejected", "\(changes)")
                    #expect(try row.decode("code", as: String?.self) == "INVALID_INPUT")
                    #expect(message.contains("purchases[1]") && message.contains(field), "\(changes): \(message)")
                    #expect(try db.withConnection { try $0.count("SELECT count(*) FROM ledger.events") } == 0)
                }
            }
        }
    }

    /// The decoder's limits and the table's are the same rules: for every limit of the embedded
    /// rules, a value exactly at it is recorded by both sides, one character (or byte) over it
    /// is refused by both, naming the field. The characters are multi-byte: limits count
    /// characters (Unicode scalars), not bytes.
    @Test func theLibraryAndTheDatabaseHoldTheSameRules() async throws {
        try await TestDatabase.with { db in
            try await LoginRoles.with(db) { roles in
                let writer = try roles.connect(roles.writer)
                defer { writer.close() }
                let table = try writer.query("""
                    SELECT field, array_to_string(aliases, ',') AS aliases, kind, max_length, max_bytes, required FROM ledger.field_rules
                     WHERE scope = 'payment' ORDER BY position
                    """).map { row in
                    "\(try row.decode("field", as: String.self)) \(try row.decode("aliases", as: String.self)) "
                        + "\(try row.decode("kind", as: String.self)) \(try row.decode("max_length", as: Int?.self) ?? 0) "
                        + "\(try row.decode("max_bytes", as: Int?.self) ?? 0) \(try row.decode("required", as: Bool.self))"
                }
                #expect(table == FieldRules.payment.map {
                    "\($0.field) \($0.aliases.joined(separator: ",")) \($0.kind.rawValue) \($0.maxLength ?? 0) \($0.maxBytes ?? 0) \($0.required)"
                })

                let ledger = Ledger(databaseURL: db.conninfo, poolSize: 1)
                var checked: [String] = []
                for (index, rule) in FieldRules.payment.enumerated() {
                    // A value of `count` characters (a payload: bytes) made of `character`, each
                    // side its own so that the names stay unique.
                    let value: (Int, String) -> String
                    let limit: Int
                    switch (rule.kind, rule.maxLength, rule.maxBytes) {
                    case (.text, let max?, _), (.token, let max?, _):
                        (value, limit) = ({ Self.long($0, $1) }, max)
                    case (.payload, _, let max?):
                        (value, limit) = ({ n, _ in Self.quoted(String(repeating: "é", count: n / 2) + String(repeating: "a", count: n % 2)) }, max)
                    default:
                        continue
                    }
                    checked.append(rule.field)
                    for (count, accepted) in [(limit, true), (limit + 1, false)] {
                        // Unique names for each payment, unless the field is one of them.
                        let names: [String: String?] = ["paymentSeq": Self.quoted("P-\(index)-\(count)"),
                                                        "transactionId": Self.quoted("T-\(index)-\(count)")]
                        let line = Fixture.purchaseLine(names.merging([rule.field: value(count, "😀")]) { $1 })
                        let outcome = try await Self.execute(line, on: ledger)
                        #expect((outcome.status == .recorded) == accepted, "library, \(rule.field) of \(count): \(outcome.error?.message ?? "")")
                        if !accepted { #expect(outcome.error?.message.contains(rule.field) == true) }
                        // The database sees a token only as its digest: its length is the library's alone.
                        guard rule.kind != .token else { continue }
                        let command = Self.command(names.mapValues { $0.map { "\"W" + $0.dropFirst() } }.merging([rule.field: value(count, "é")]) { $1 })
                        let (status, _, message) = try Self.record(command, as: writer)
                        #expect(status == (accepted ? "recorded" : "rejected"), "writer, \(rule.field) of \(count): \(message)")
                        if !accepted { #expect(message.contains(" \(rule.field) ")) }
                    }
                }
                #expect(checked == ["paymentSeq", "userId", "productId", "transactionId", "originalTransactionId", "purchaseToken", "payload"])
                // A limit the library's typed API does not check is still the database's: a
                // Payment built in Swift with a user ID over the limit is refused.
                var payment = Fixture.consumable("P-typed")
                payment.userId = String(repeating: "😀", count: FieldRules.payment.first { $0.field == "userId" }!.maxLength! + 1)
                let before = try db.withConnection { try $0.count("SELECT count(*) FROM ledger.events") }
                let outcome = try await ledger.execute(.record(payment, kind: .purchase))
                #expect(outcome.status == .rejected && outcome.error?.code == .invalidInput && outcome.error?.message.contains(" userId ") == true)
                #expect(try db.withConnection { try $0.count("SELECT count(*) FROM ledger.events") } == before)
                await ledger.close()
            }
        }
    }
}
