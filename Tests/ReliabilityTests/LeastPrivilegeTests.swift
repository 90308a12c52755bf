import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

@Suite("Least privilege and an immutable log")
struct LeastPrivilegeTests {
    /// Writes a login role must not be able to make directly, whatever it is granted.
    static let directWrites: [String] = [
        "UPDATE ledger.events SET type = 'PaymentRefunded'",
        "DELETE FROM ledger.events",
        "TRUNCATE ledger.events",
        """
        INSERT INTO ledger.events (stream, version, type, data, occurred_at, prev_hash, hash)
        VALUES ('payment:X', 1, 'PurchaseRecorded', '{}', now(), '', '')
        """,
        """
        INSERT INTO ledger.payments (payment_seq, user_id, store_code, product_id, product_type, price, currency,
            transaction_id, purchase_time, sandbox_payment, promotion_payment, token_sha256, kind,
            recorded_position, recorded_at)
        VALUES ('X', 'u1', 'AS', 'gem', 'CONSUMABLE', 1, 'USD', 'X', now(), false, false, '', 'purchase', 1, now())
        """,
        "UPDATE ledger.payments SET consumed_at = NULL, consumed_position = NULL",
        "DELETE FROM ledger.payments",
        "UPDATE ledger.streams SET version = 1",
        "SELECT ledger.append('payment:X', 'PurchaseRecorded', '{}', now())",
        "SELECT ledger.append_set(ARRAY['payment:X'], ARRAY['PurchaseRecorded'], ARRAY['{}'::jsonb], ARRAY[now()], false)",
        "SELECT * FROM ledger.apply_payments('[]', false)",
        "SELECT * FROM ledger.apply_consumes(ARRAY['P-1'], ARRAY['u1'], ARRAY[NULL::bytea], ARRAY[now()])",
        "SELECT ledger.record_payment_core('purchase', '{}', true)",
        "SELECT ledger.project_range(1, 1)",
        "SELECT ledger.install_projections('evil')",
        "CREATE TABLE ledger.evil (x int)",
    ]

    @Test func aWriterRoleIngestsAndConsumesButCannotChangeTheLogDirectly() async throws {
        try await TestDatabase.with { db in
            try await LoginRoles.with(db) { roles in
                let lines = [
                    ContractLines.purchase("P-1"), ContractLines.consume("P-1"), ContractLines.purchase("P-2"),
                    ContractLines.refund("P-2"),
                    ContractLines.renewalOrPurchase(lineage: "L-1", index: 0, user: "u1"),
                    ContractLines.cancel(original: "L-1"),
                    ContractLines.restore(user: "u1", items: [ContractLines.subscriptionPayment(lineage: "L-1", index: 1, user: "u1").fields]),
                ]
                let out = try LedgerProcess.run(["ingest", "--database-url", roles.conninfo(roles.writer)],
                                                input: ContractLines.file(lines))
                #expect(out.status == 0, "\(out.stderr)")
                #expect(try IngestResult.all(out.lines).map(\.status)
                        == ["recorded", "consumed", "recorded", "recorded", "recorded", "recorded", "restored"])

                let writer = try roles.connect(roles.writer)
                defer { writer.close() }
                let before = try db.withConnection { try LedgerSnapshot($0) }
                for statement in Self.directWrites {
                    #expect(writer.failure(SQL(unsafeSQL: statement)) == .insufficientPrivilege, "as ledger_writer: \(statement)")
                }
                #expect(try db.withConnection { try LedgerSnapshot($0) } == before)
            }
        }
    }

    @Test func aReaderRoleQueriesButCannotWrite() async throws {
        try await TestDatabase.with { db in
            try await LoginRoles.with(db) { roles in
                try db.withConnection { c throws in
                    _ = try c.ingest([ContractLines.purchase("P-1"),
                                      ContractLines.renewalOrPurchase(lineage: "L-1", index: 0, user: "u1")])
                }
                let url = roles.conninfo(roles.reader)
                let unconsumed = try LedgerProcess.run(["unconsumed", "--user", "u1", "--json", "--database-url", url])
                #expect(unconsumed.status == 0 && unconsumed.stdout.contains("\"P-1\""), "\(unconsumed.stderr)")
                let subscriptions = try LedgerProcess.run(["subscriptions", "--user", "u1", "--at", "2026-01-15T00:00:00Z",
                                                           "--json", "--database-url", url])
                #expect(subscriptions.status == 0 && subscriptions.stdout.contains("\"L-1\""), "\(subscriptions.stderr)")

                let reader = try roles.connect(roles.reader)
                defer { reader.close() }
                // The analytics views, when that schema exists, are the reader's too.
                let views = try reader.query("""
                    SELECT table_name::text AS name FROM information_schema.tables
                     WHERE table_schema = 'analytics' ORDER BY 1
                    """).map { try $0.decode("name", as: String.self) }
                for view in views {
                    #expect(reader.failure("SELECT * FROM analytics.\(identifier: view) LIMIT 1") == nil, "analytics.\(view)")
                }
                let before = try db.withConnection { try LedgerSnapshot($0) }
                let ingest = try LedgerProcess.run(["ingest", "--database-url", url], input: ContractLines.file([ContractLines.purchase("P-2")]))
                #expect(ingest.status == 2 && ingest.stdout.isEmpty, "a reader ingested: \(ingest.stdout) \(ingest.stderr)")
                let writes = Self.directWrites + [
                    "SELECT ledger.record_payment('purchase', '{}')",
                    "SELECT ledger.consume('P-1', 'u1', sha256('tok-P-1'), now())",
                    "SELECT ledger.refund('P-1', now(), NULL)",
                    "SELECT ledger.cancel('AS', 'L-1', now())",
                    "SELECT ledger.restore('u1', 'AS', now(), '[]')",
                ] + Self.storeFacts.map { "SELECT * FROM ledger.notify('\($0)'::jsonb)" }
                for statement in writes {
                    #expect(reader.failure(SQL(unsafeSQL: statement)) == .insufficientPrivilege, "as ledger_reader: \(statement)")
                }
                #expect(try db.withConnection { try LedgerSnapshot($0) } == before)
            }
        }
    }

    /// What only a verified store message may establish, as `ledger.notify` takes it (the
    /// forgeries a hostile writer login would try): a refund of P-2 undone, a payment with no purchase token
    /// (so a consume needs none), and lineage L-1's expiry extended to 9999.
    static let storeFacts: [String] = [
        """
        {"storeCode":"AS","notificationId":"forged-1","notificationType":"REFUND_REVERSED","effect":"refundReversed",\
        "effectiveAt":"2026-01-04T00:00:00.000000Z","transactionId":"T-P-2","received":{}}
        """,
        """
        {"storeCode":"AS","notificationId":"forged-2","notificationType":"ONE_TIME_CHARGE","effect":"payment",\
        "effectiveAt":"2026-01-04T00:00:00.000000Z","transactionId":"T-FREE","storeProductType":"consumable",\
        "payment":{"storeCode":"AS","productId":"gem_100","price":"0","currency":"USD","transactionId":"T-FREE",\
        "purchaseTime":"2026-01-04T00:00:00.000000Z","sandboxPayment":false,"promotionPayment":false},"received":{}}
        """,
        """
        {"storeCode":"AS","notificationId":"forged-3","notificationType":"RENEWAL_EXTENDED","effect":"extend",\
        "effectiveAt":"2026-01-04T00:00:00.000000Z","transactionId":"L-1","originalTransactionId":"L-1",\
        "expiryTime":"9999-12-31T00:00:00.000000Z","received":{}}
        """,
    ].map { $0.replacingOccurrences(of: "\n", with: "") }

    /// `ledger.notify` trusts its input (signatures are checked in Swift, before it is called), so
    /// only `ledger_store`, the role of the process that verifies them, may execute it: a
    /// `ledger_writer` login, a backend's, is refused every store fact and writes nothing, while
    /// a `ledger_store` login applies them.
    @Test func onlyTheStoreRoleStatesWhatOnlyAStoreMay() async throws {
        try await TestDatabase.with { db in
            try await LoginRoles.with(db) { roles in
                try db.withConnection { c throws in
                    _ = try c.ingest([ContractLines.purchase("P-2"), ContractLines.refund("P-2"),
                                      ContractLines.renewalOrPurchase(lineage: "L-1", index: 0, user: "u1")])
                }
                let writer = try roles.connect(roles.writer)
                defer { writer.close() }
                let before = try db.withConnection { try LedgerSnapshot($0) }
                for fact in Self.storeFacts {
                    #expect(writer.failure(SQL(unsafeSQL: "SELECT * FROM ledger.notify('\(fact)'::jsonb)")) == .insufficientPrivilege,
                            "as ledger_writer: \(fact.prefix(80))")
                }
                #expect(try db.withConnection { try LedgerSnapshot($0) } == before)
                // The writer's own refusal reaches `ledger ingest` as an error, not as a recorded line.
                #expect(try writer.count("SELECT count(*) FROM ledger.payments WHERE payment_seq = 'P-2' AND refunded_at IS NULL") == 0)

                let store = try roles.connect(roles.store)
                defer { store.close() }
                let row = try store.query(SQL(unsafeSQL: "SELECT status, code FROM ledger.notify('\(Self.storeFacts[0])'::jsonb)"))[0]
                let code = try row.decode("code", as: String?.self)
                #expect(try row.decode("status", as: String.self) == "recorded", "\(code ?? "")")
                #expect(try store.count("SELECT count(*) FROM ledger.payments WHERE payment_seq = 'P-2' AND refunded_at IS NULL") == 1)
                // And a ledger_store login is a writer too: the lines that teach the ledger and the commands.
                #expect(store.failure("SELECT * FROM ledger.link_account('u1', 'AS', 'acct-1')") == nil)
            }
        }
    }

    /// `ledger ingest` of a notification line as a writer login exits 2, saying which role it
    /// lacks, and writes nothing; as a `ledger_store` login the same line is recorded.
    @Test func ingestingANotificationNeedsTheStoreRole() async throws {
        let notification = #"{"version":"1.0","packageName":"com.example.game","eventTimeMillis":"1767225600000","testNotification":{"version":"1.0"}}"#
        let line = #"{"type":"googleNotification","message":{"data":"\#(Data(notification.utf8).base64EncodedString())","messageId":"m-1"},"subscription":"s"}"#
        try await TestDatabase.with { db in
            try await LoginRoles.with(db) { roles in
                let before = try db.withConnection { try LedgerSnapshot($0) }
                let asWriter = try LedgerProcess.run(["ingest", "--google-package-names", "com.example.game",
                                                      "--database-url", roles.conninfo(roles.writer)], input: line + "\n")
                #expect(asWriter.status == 2 && asWriter.stdout.isEmpty, "\(asWriter.stdout)")
                #expect(asWriter.stderr.contains("ledger_store"), "\(asWriter.stderr)")
                #expect(try db.withConnection { try LedgerSnapshot($0) } == before)
                let asStore = try LedgerProcess.run(["ingest", "--google-package-names", "com.example.game",
                                                     "--database-url", roles.conninfo(roles.store)], input: line + "\n")
                #expect(asStore.status == 0 && asStore.stdout.contains(#""status":"ignored""#), "\(asStore.stdout) \(asStore.stderr)")
            }
        }
    }

    @Test func evenTheOwnerCannotUpdateDeleteOrTruncateTheLog() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                _ = try c.ingest([ContractLines.purchase("P-1"), ContractLines.consume("P-1")])
                let before = try LedgerSnapshot(c)
                let hashes = try c.query("SELECT string_agg(encode(hash, 'hex'), ',' ORDER BY position) AS h FROM ledger.events")[0]
                    .decode("h", as: String.self)
                for statement in [
                    "UPDATE ledger.events SET data = data || '{\"userId\":\"thief\"}'",
                    "DELETE FROM ledger.events WHERE type = 'PaymentConsumed'",
                    "TRUNCATE ledger.events",
                    "TRUNCATE ledger.events CASCADE",
                    "TRUNCATE ledger.streams, ledger.events",
                    "WITH gone AS (DELETE FROM ledger.events RETURNING 1) SELECT count(*) FROM gone",
                    """
                    INSERT INTO ledger.events (user_id, position, stream, version, type, data, occurred_at, prev_hash, hash)
                    OVERRIDING SYSTEM VALUE
                    SELECT user_id, position, stream, version, type, data, occurred_at, prev_hash, hash FROM ledger.events
                    ON CONFLICT (user_id, position) DO UPDATE SET type = 'PaymentRefunded'
                    """,
                    """
                    MERGE INTO ledger.events e USING (SELECT 2 AS p) s ON e.position = s.p
                    WHEN MATCHED THEN DELETE
                    """,
                ] {
                    #expect(c.failure(SQL(unsafeSQL: statement)) == .insufficientPrivilege, "as the owner: \(statement)")
                }
                #expect(try LedgerSnapshot(c) == before)
                #expect(try c.query("SELECT string_agg(encode(hash, 'hex'), ',' ORDER BY position) AS h FROM ledger.events")[0]
                    .decode("h", as: String.self) == hashes)
            }
        }
    }

    /// `session_replication_role = replica` (a superuser's setting, meant for replication) turns
    /// every ordinary trigger off; the log's guards are `ENABLE ALWAYS`, so they still refuse. (A
    /// superuser can still disable them by name: README, "Who can do what".)
    @Test func aSuperuserInReplicaModeStillCannotChangeTheLog() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                _ = try c.ingest([ContractLines.purchase("P-1")])
                let before = try LedgerSnapshot(c)
                try c.query("SET session_replication_role = replica")
                defer { _ = try? c.query("RESET session_replication_role") }
                for statement in ["UPDATE ledger.events SET data = data || '{\"userId\":\"thief\"}'",
                                  "DELETE FROM ledger.events", "TRUNCATE ledger.events CASCADE"] {
                    #expect(c.failure(SQL(unsafeSQL: statement)) == .insufficientPrivilege, "in replica mode: \(statement)")
                }
                try c.query("RESET session_replication_role")
                #expect(try LedgerSnapshot(c) == before)
            }
        }
    }

    /// The command functions are the writer's only door, so they must not trust their arguments:
    /// SQL's NULL makes every comparison unknown, and an unknown check must refuse, not pass.
    @Test func aWriterCannotConsumeWithoutTheRightTokenAndUser() async throws {
        try await TestDatabase.with { db in
            try await LoginRoles.with(db) { roles in
                try db.withConnection { c throws in _ = try c.ingest([ContractLines.purchase("P-1")]) }
                let writer = try roles.connect(roles.writer)
                defer { writer.close() }
                for (user, digest, code) in [("'u1'", "NULL", "TOKEN_INVALID"), ("NULL", "sha256('tok-P-1')", "USER_INVALID"),
                                             ("'u1'", "''::bytea", "TOKEN_INVALID"), ("'u1'", "sha256('tok-P-2')", "TOKEN_INVALID"),
                                             ("'u2'", "sha256('tok-P-1')", "USER_INVALID")] {
                    let row = try writer.query(SQL(unsafeSQL: """
                        SELECT status, code FROM ledger.consume('P-1', \(user), \(digest), now())
                        """))[0]
                    let status = try row.decode("status", as: String.self), got = try row.decode("code", as: String?.self)
                    #expect(status == "rejected" && got == code, "user \(user), digest \(digest): \(status) \(got ?? "")")
                }
                #expect(try writer.query("SELECT count(*)::bigint AS n FROM ledger.payments WHERE consumed_at IS NOT NULL")[0]
                    .decode("n", as: Int.self) == 0)
            }
        }
    }

    /// The command functions are a writer's only way to write, so they are where the contract's
    /// rules must hold for it: what `ledger ingest` refuses, a direct call must not record either.
    @Test(arguments: [
        ("storeCode", "\"ZZ\""), ("productType", "\"FOO\""), ("price", "\"-5\""), ("price", "\"NaN\""),
        ("currency", "\"usd\""), ("currency", "\"US\""), ("price", "\"1e2\""), ("price", "\".5\""),
        ("purchaseTokenSha256", "\"\""), ("purchaseTokenSha256", "\"00\""),
        ("purchaseTokenSha256", "\"" + String(repeating: "zz", count: 32) + "\""),
        ("userId", "\"\""), ("paymentSeq", "\"\""), ("productId", "\"\""), ("transactionId", "null"),
        ("sandboxPayment", "null"), ("promotionPayment", "\"yes\""), ("purchaseTime", "null"),
    ])
    func aWriterCannotRecordWhatIngestRefuses(field: String, value: String) async throws {
        try await TestDatabase.with { db in
            try await LoginRoles.with(db) { roles in
                let writer = try roles.connect(roles.writer)
                defer { writer.close() }
                var event: [String: String] = [
                    "userId": "\"u1\"", "storeCode": "\"AS\"", "productId": "\"gem_100\"", "productType": "\"CONSUMABLE\"",
                    "price": "\"0.99\"", "currency": "\"USD\"", "paymentSeq": "\"P-1\"", "transactionId": "\"T-1\"",
                    "originalTransactionId": "null", "purchaseTime": "\"2026-01-01T00:00:00.000000Z\"", "expiryTime": "null",
                    "payload": "null", "sandboxPayment": "false", "promotionPayment": "false", "productSeq": "null",
                    "purchaseTokenSha256": "\"" + String(repeating: "ab", count: 32) + "\"",
                ]
                event[field] = value
                let data = "{" + event.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
                // Refused as ingest refuses it: INVALID_INPUT, naming the field.
                let row = try writer.query("SELECT status, code, message FROM ledger.record_payment('purchase', \(data)::jsonb)")[0]
                #expect(try row.decode("status", as: String.self) == "rejected", "\(field) = \(value) was not refused")
                #expect(try row.decode("code", as: String?.self) == "INVALID_INPUT")
                let named = field == "purchaseTokenSha256" ? "purchaseToken" : field
                let message = try row.decode("message", as: String?.self) ?? ""
                #expect(message.contains(" \(named) "), "\(field) = \(value): \(message)")
                #expect(try db.withConnection { try $0.count("SELECT count(*) FROM ledger.events") } == 0)
            }
        }
    }
}
