import Foundation
import LedgerDemo
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// Every event names the user it belongs to (`ledger.events.user_id`, written by `ledger.append`):
/// what a user's history reads by, the feed and the webhooks show, and a distributed log is
/// sharded by. (The reader's side: CatchUpReaderTests, in the process of its own that the reader
/// needs, since any open transaction of the cluster holds back what it returns.)
@Suite("Event owners")
struct EventOwnerTests {
    typealias M = AppleMint

    /// The unique keys of the log and its streams, and the log's other indexes: each key begins
    /// with the owner, as Citus requires of a table distributed by it.
    static let logKeys = [
        "events_pkey: PRIMARY KEY (user_id, \"position\")",
        "events_stream_version_key: UNIQUE (user_id, stream, version)",
        "index events_position_idx",
        "index events_tx_position_idx",
        "streams_pkey: PRIMARY KEY (user_id, stream)",
    ]

    @Test func theLogsKeysBeginWithTheOwner() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                #expect(try c.logKeys() == Self.logKeys)
            }
        }
    }

    /// An App Store lineage whose notifications arrive before the account link that names their
    /// user: the first are parked (no owner), released to the user when the link comes, and the
    /// later ones applied to the user at once. A product declaration has no user.
    @Test func eachEventIsOwnedByTheUserItWasAppliedToAndParkedOnesByNobody() async throws {
        let mint = AppleMint()
        func tx(_ n: Int, _ from: String, _ to: String) -> String {
            M.transaction("o0\(n)", original: "o00", purchase: from, expires: to, account: "acct-o")
        }
        let first = tx(0, "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z")
        let second = tx(1, "2026-04-01T00:00:00Z", "2026-05-01T00:00:00Z")
        let parked = [
            M.payload("SUBSCRIBED", uuid: "o-1", signed: "2026-03-01T00:00:00Z", transaction: first),
            M.payload("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", uuid: "o-2",
                      signed: "2026-03-10T00:00:00Z", transaction: first),
        ].map(mint.line)
        let link = #"{"type":"accountLink","userId":"u-o","storeCode":"AS","appAccountToken":"acct-o"}"#
        let applied = [M.payload("DID_RENEW", uuid: "o-3", signed: "2026-04-01T00:00:00Z", transaction: second)].map(mint.line)
        let product = #"{"type":"product","storeCode":"GG","productId":"gems","productType":"CONSUMABLE"}"#

        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let outcomes = try c.ingest(parked + [link] + applied + [product], stores: mint.stores)
                #expect(outcomes.map(\.status) == [.parked, .parked, .recorded, .recorded, .recorded], "\(outcomes)")

                let rows = try c.query("""
                    SELECT type, coalesce(data->>'notificationId', '') AS id, user_id FROM ledger.events ORDER BY position
                    """).map { "\(try $0.decode("type", as: String.self)) \(try $0.decode("id", as: String.self)) \(try $0.decode("user_id", as: String.self))" }
                let received = rows.filter { $0.hasPrefix("NotificationReceived") }
                #expect(received == ["NotificationReceived o-1 ", "NotificationReceived o-2 ", "NotificationReceived o-3 u-o"], "\(rows)")
                #expect(rows.filter { $0.hasPrefix("NotificationReleased") } == ["NotificationReleased o-1 u-o", "NotificationReleased o-2 u-o"])
                #expect(rows.filter { $0.hasPrefix("ProductDeclared") } == ["ProductDeclared  "])
                // Every event whose data names a user is that user's.
                #expect(try c.count("""
                    SELECT count(*) FROM ledger.events WHERE data ? 'userId' AND user_id IS DISTINCT FROM data->>'userId'
                    """) == 0)
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE data ? 'userId'") >= 6)
                // A stream is its latest event's owner's: a parked notification's stream moved to
                // the user with its release, so its NotificationReceived, written before, is the one
                // kind of event whose owner is not its stream's.
                let strangers = try c.query("""
                    SELECT e.type, e.user_id, s.user_id AS stream_owner FROM ledger.events e JOIN ledger.streams s USING (stream)
                     WHERE e.user_id <> s.user_id ORDER BY e.position
                    """).map {
                    "\(try $0.decode("type", as: String.self)) \(try $0.decode("user_id", as: String.self))>\(try $0.decode("stream_owner", as: String.self))"
                }
                #expect(strangers == ["NotificationReceived >u-o", "NotificationReceived >u-o"])
                #expect(try c.count("""
                    SELECT count(*) FROM ledger.streams s JOIN ledger.events e ON e.stream = s.stream AND e.version = s.version
                     WHERE e.user_id <> s.user_id
                    """) == 0)
                // The projection rows go with their events: the released notifications moved to
                // the user with their streams, and the auto-renew change is the lineage's user's.
                let notifications = try c.query("""
                    SELECT notification_id || ' ' || user_id || ' ' || parked AS row FROM ledger.notifications ORDER BY position
                    """).map { try $0.decode("row", as: String.self) }
                #expect(notifications == ["o-1 u-o false", "o-2 u-o false", "o-3 u-o false"])
                let owners = try c.projectionOwnership()
                #expect(owners.values.allSatisfy { $0.strangers == 0 }, "\(owners)")
                #expect(owners["auto_renew_changes"]?.rows == 1 && owners["account_links"]?.rows == 1, "\(owners)")
                // The notifications' keys moved to the user with them.
                let registries = try c.keyRegistryAgreement()
                #expect(registries["notification_keys"] == RegistryAgreement(keys: 3, disagreeing: 0), "\(registries)")
                #expect(try c.count("SELECT count(*) FROM ledger.notification_keys WHERE user_id = 'u-o'") == 3)
                // Every stream is the owner's of the key its name is made of: the notifications',
                // the payments', the lineage's, the account token's, the product's ('').
                let streams = try c.streamKeyAgreement()
                #expect(streams.streams == 8 && streams.disagreeing == 0, "\(streams)")
                #expect(try ProjectionVerifier(connection: c).verify().isEqual, "a replay moves them as the appends did")
            }
            // The user's history: the released notifications (found through their releases) and
            // the one applied at once (the user's own), each once.
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 1)
            let history = try await ledger.history(userId: "u-o")
            await ledger.close()
            let notifications = history.entries.filter { $0.type == .notificationReceived }.compactMap(\.notificationId)
            #expect(notifications == ["o-1", "o-2", "o-3"], "\(history.entries.map(\.summary))")
            #expect(history.entries.filter { $0.type == .notificationReleased }.count == 2)
        }
    }

    /// The demo's ledger (purchases, renewals, consumes, refunds, restores, cancels of both
    /// stores): every event is its data's user's and its stream's owner's, and every projection
    /// row its event's owner's.
    @Test func theDemosEventsAreTheirUsersAndTheirStreamsOwners() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let outcomes = try c.ingest(Array(DemoGenerator(seed: 11, users: 40)))
                #expect(outcomes.count > 200)
                #expect(try c.count("SELECT count(*) FROM ledger.events WHERE user_id <> coalesce(data->>'userId', '')") == 0)
                #expect(try c.count("""
                    SELECT count(*) FROM ledger.events e JOIN ledger.streams s USING (stream) WHERE e.user_id <> s.user_id
                    """) == 0)
                let users = try c.count("SELECT count(DISTINCT data->>'userId') FROM ledger.events")
                #expect(users > 30)
                #expect(try c.count("SELECT count(DISTINCT user_id) FROM ledger.streams WHERE user_id <> ''") == users)
                // Every projection row is its event's owner's (and its lineage's user's).
                let owners = try c.projectionOwnership()
                #expect(owners.values.allSatisfy { $0.strangers == 0 }, "\(owners)")
                for table in ["payments", "lineages", "auto_renew_changes", "entitled_spans", "lineage_states"] {
                    #expect((owners[table]?.rows ?? 0) > 0, "the demo wrote no \(table)")
                }
                // A row handed to another user is counted.
                try c.execute("UPDATE ledger.auto_renew_changes SET user_id = 'u-else' WHERE position = (SELECT min(position) FROM ledger.auto_renew_changes)")
                #expect(try c.projectionOwnership()["auto_renew_changes"]?.strangers == 1)
                // Every key unique across users is in its registry, under the owner of the rows
                // that carry it; a key handed to another user, or lost, is counted.
                let registries = try c.keyRegistryAgreement()
                #expect(registries.count == 5 && registries.values.allSatisfy { $0.disagreeing == 0 }, "\(registries)")
                for registry in ["payment_keys", "transaction_keys", "lineage_keys", "token_keys"] {
                    #expect((registries[registry]?.keys ?? 0) > 0, "the demo claimed no key in \(registry)")
                }
                #expect(try c.count("SELECT count(*) FROM ledger.payments") + c.count("SELECT count(*) FROM ledger.payment_aliases")
                        == registries["payment_keys"]?.keys)
                // Every stream is the owner's of the key its name is made of, so the registries
                // keep the stream names unique across owners too.
                let streams = try c.streamKeyAgreement()
                #expect(streams.streams > 100 && streams.disagreeing == 0, "\(streams)")
                try c.executeScript(unsafeSQL: """
                    UPDATE ledger.payment_keys SET user_id = 'u-else' WHERE payment_seq = (SELECT min(payment_seq) FROM ledger.payment_keys);
                    DELETE FROM ledger.lineage_keys WHERE lineage_id = (SELECT min(lineage_id) FROM ledger.lineage_keys);
                    """)
                let tampered = try c.keyRegistryAgreement()
                #expect(tampered["payment_keys"]?.disagreeing == 2 && tampered["lineage_keys"]?.disagreeing == 1, "\(tampered)")
                // The payment's stream disagrees with its registry now, and so does the lineage's,
                // when the lineage has one (a cancel or a billing change writes it).
                let lineageStreams = try c.count("""
                    SELECT count(*) FROM ledger.streams
                     WHERE stream LIKE 'lineage:%' AND substr(stream, 12) = (SELECT min(original_transaction_id) FROM ledger.lineages)
                    """)
                #expect(try c.streamKeyAgreement().disagreeing == 1 + lineageStreams)
            }
        }
    }

    /// A ledger whose projection rows predate their owners (the release before 0012) gets them when
    /// migrated, in the migration's transaction: an append between that commit and the end of the
    /// rebuild that follows (which replaces the tables) projects into the live tables as they are.
    @Test func projectionRowsOfAnOlderReleaseGetTheirOwnersBeforeTheRebuild() async throws {
        let mint = AppleMint()
        func tx(_ n: Int, _ from: String, _ to: String) -> String {
            M.transaction("q0\(n)", original: "q00", purchase: from, expires: to, account: "acct-q")
        }
        let first = tx(0, "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z")
        let lines = [
            M.payload("SUBSCRIBED", uuid: "q-1", signed: "2026-03-01T00:00:00Z", transaction: first),
            M.payload("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", uuid: "q-2",
                      signed: "2026-03-10T00:00:00Z", transaction: first),
        ].map(mint.line) + [#"{"type":"accountLink","userId":"u-q","storeCode":"AS","appAccountToken":"acct-q"}"#]
        let later = mint.line(M.payload("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED", uuid: "q-3",
                                        signed: "2026-03-20T00:00:00Z", transaction: first))

        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                let outcomes = try c.ingest(lines, stores: mint.stores)
                #expect(outcomes.map(\.status) == [.parked, .parked, .recorded], "\(outcomes)")
                // The shape of the release before: no owner on these four tables, 0012 not applied,
                // the log's keys without the owner (0015), and projection definitions that differ
                // from this build's. The notifications were parked, then released: their streams
                // moved from '' to u-q.
                try c.executeScript(unsafeSQL: """
                    ALTER TABLE ledger.auto_renew_changes DROP COLUMN user_id;
                    ALTER TABLE ledger.billing_states DROP COLUMN user_id;
                    ALTER TABLE ledger.notifications DROP COLUMN user_id;
                    ALTER TABLE ledger.payment_aliases DROP COLUMN user_id;
                    ALTER TABLE ledger.entitled_spans DROP COLUMN user_id;
                    ALTER TABLE ledger.lineage_states DROP COLUMN user_id;
                    DROP TABLE ledger.payment_keys, ledger.transaction_keys, ledger.lineage_keys, ledger.token_keys, ledger.notification_keys;
                    ALTER TABLE ledger.streams DROP CONSTRAINT streams_pkey, ADD CONSTRAINT streams_pkey PRIMARY KEY (stream);
                    ALTER TABLE ledger.events DROP CONSTRAINT events_pkey, DROP CONSTRAINT events_stream_version_key,
                        ADD CONSTRAINT events_pkey PRIMARY KEY (position),
                        ADD CONSTRAINT events_stream_version_key UNIQUE (stream, version);
                    DROP INDEX ledger.events_position_idx;
                    CREATE INDEX events_owner_idx ON ledger.events (user_id) WHERE user_id <> '';
                    DELETE FROM ledger.schema_migrations
                     WHERE name IN ('0012_projection_row_owners.sql', '0013_key_registries.sql', '0014_registry_names.sql',
                                    '0015_log_owner_keys.sql');
                    UPDATE ledger.schema_definitions SET checksum = 'the release before'
                     WHERE path = 'projections/install_project_range.sql';
                    """)
                var between: [CommandOutcome] = []
                var betweenOwners: [String: ProjectionOwnership] = [:]
                var betweenRegistries: [String: RegistryAgreement] = [:]
                let done = try Migrator().migrate(c) { line in
                    guard line == "rebuilding the projections" else { return }
                    // The migration's transaction has committed; the rebuild has not begun.
                    try? db.withConnection { w throws in
                        between = try w.ingest([later], stores: mint.stores)
                        betweenOwners = try w.projectionOwnership()
                        betweenRegistries = try w.keyRegistryAgreement()
                    }
                }
                #expect(done.contains("0012_projection_row_owners.sql") && done.contains("0013_key_registries.sql")
                        && done.contains("0014_registry_names.sql") && done.contains("0015_log_owner_keys.sql")
                        && done.last?.hasPrefix("rebuilt the projections") == true, "\(done)")
                #expect(try c.logKeys() == Self.logKeys, "the log's keys after 0015")
                #expect(try ChainVerifier(connection: c).verify().isIntact)
                // The registries were filled in the migration's transaction, and the append between
                // claimed its notification's key in them.
                #expect(betweenRegistries.count == 5 && betweenRegistries.values.allSatisfy { $0.disagreeing == 0 },
                        "\(betweenRegistries)")
                #expect(betweenRegistries["notification_keys"]?.keys == 3 && betweenRegistries["lineage_keys"]?.keys == 1,
                        "\(betweenRegistries)")
                #expect(between.map(\.status) == [.recorded], "\(between)")
                #expect(betweenOwners["notifications"] == ProjectionOwnership(rows: 3, strangers: 0), "\(betweenOwners)")
                #expect(betweenOwners["auto_renew_changes"] == ProjectionOwnership(rows: 2, strangers: 0), "\(betweenOwners)")
                #expect(betweenOwners["lineage_states"]?.strangers == 0 && (betweenOwners["lineage_states"]?.rows ?? 0) >= 3,
                        "\(betweenOwners)")
                #expect(betweenOwners["entitled_spans"]?.strangers == 0 && (betweenOwners["entitled_spans"]?.rows ?? 0) > 0,
                        "\(betweenOwners)")
                let owners = try c.projectionOwnership()
                #expect(owners.values.allSatisfy { $0.strangers == 0 } && owners["auto_renew_changes"]?.rows == 2, "\(owners)")
                #expect(try c.count("SELECT count(*) FROM ledger.notifications WHERE user_id = 'u-q'") == 3)
                #expect(try c.keyRegistryAgreement().values.allSatisfy { $0.disagreeing == 0 })
            }
        }
    }

    /// A stream's name is one owner's, and the key registries keep it, not the log's keys (they
    /// begin with the owner, as a log distributed by owner needs). A command of another user is
    /// refused before it appends. An append past the commands, alone or in a set, makes that
    /// user's own stream of the name: the first owner's stream is untouched, and the chain check
    /// and the streams' agreement with the registries both report it.
    @Test(arguments: ["append", "append_set, heads locked", "append_set"])
    func anAppendPastTheCommandsUnderAnotherOwnerForksTheStreamAndIsReported(path: String) async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                #expect(try c.run(.record(Fixture.consumable("P-own", user: "u-a"), kind: .purchase)).status == .recorded)
                let consume = try c.run(.consume(paymentSeq: "P-own", userId: "u-b", purchaseToken: "tok-P-own", time: nil))
                #expect(consume.error?.code == .userInvalid, "\(consume)")
                let batch = try c.executeBatch([.consume(paymentSeq: "P-own", userId: "u-b", purchaseToken: "tok-P-own", time: nil)])
                #expect(batch.first?.error?.code == .userInvalid, "\(batch)")
                #expect(try c.count("SELECT count(*) FROM ledger.events") == 1)
                #expect(try ChainVerifier(connection: c).verify().isIntact)

                let data = #"{"userId": "u-b", "paymentSeq": "P-own"}"#
                switch path {
                case "append":
                    try c.execute("SELECT ledger.append('payment:P-own', 'PaymentConsumed', \(JSONB(text: data))::jsonb, now())")
                default:
                    try c.execute("""
                        SELECT ledger.append_set(ARRAY['payment:P-own'], ARRAY['PaymentConsumed'],
                                                 ARRAY[\(JSONB(text: data))::jsonb], ARRAY[now()], \(path.hasSuffix("locked")))
                        """)
                }
                let heads = try c.query("SELECT user_id, version FROM ledger.streams WHERE stream = 'payment:P-own' ORDER BY user_id")
                #expect(try heads.map { "\(try $0.decode("user_id", as: String.self)) \(try $0.decode("version", as: Int.self))" }
                        == ["u-a 1", "u-b 1"])
                let report = try ChainVerifier(connection: c).verify()
                #expect(report.breaks.map(\.problem) == [.forked, .forked] && report.breaks.allSatisfy { $0.stream == "payment:P-own" },
                        "\(report.breaks)")
                #expect(report.breaks.contains { $0.detail.contains("heads under 2 owners, this one under 'u-b'") }, "\(report.breaks)")
                let streams = try c.streamKeyAgreement()
                #expect(streams.streams == 2 && streams.disagreeing == 1, "\(streams)")
            }
        }
    }

    /// A log written before events had owners gets them at `ledger migrate`, by the same rule,
    /// and stays append-only.
    @Test func aLogWrittenBeforeOwnersGetsThemWhenMigrated() async throws {
        try await TestDatabase.with(migrated: false) { db in
            try db.withConnection { c throws in
                let before = Migration.all.filter { $0.name < "0010" }
                #expect(before.count == 9)
                _ = try Migrator(migrations: before).migrate(c)
                #expect(try c.count("""
                    SELECT count(*) FROM information_schema.columns
                     WHERE table_schema = 'ledger' AND table_name = 'events' AND column_name = 'user_id'
                    """) == 0)
                func insert(_ stream: String, _ type: String, _ data: String) throws {
                    try c.execute("""
                        INSERT INTO ledger.events (stream, version, type, data, occurred_at, prev_hash, hash)
                        VALUES (\(stream), 1, \(type), \(JSONB(text: data))::jsonb, now(), '\\x'::bytea, '\\x'::bytea)
                        """)
                    try c.execute("INSERT INTO ledger.streams (stream, version, head_hash) VALUES (\(stream), 1, '\\x'::bytea)")
                }
                try insert("payment:P-1", "PurchaseRecorded", #"{"userId": "u-1", "paymentSeq": "P-1"}"#)
                try insert("notification:GG:n-1", "NotificationReceived",
                           #"{"storeCode": "GG", "notificationId": "n-1", "outcome": "applied", "payment": {"userId": "u-2"}}"#)
                try insert("notification:GG:n-2", "NotificationReceived",
                           #"{"storeCode": "GG", "notificationId": "n-2", "outcome": "parked", "payment": {"userId": "u-3"}}"#)
                try insert("product:GG:gems", "ProductDeclared", #"{"storeCode": "GG", "productId": "gems"}"#)
                // A push that asked the Play Developer API about a token whose payment is known: the
                // payment's user's, as ledger.notify now writes it.
                let token = String(repeating: "ab", count: 32)
                try c.execute("""
                    INSERT INTO ledger.payments (payment_seq, user_id, store_code, product_id, product_type, price, currency,
                                                 transaction_id, purchase_time, sandbox_payment, promotion_payment,
                                                 token_sha256, kind, recorded_position, recorded_at)
                    VALUES ('P-9', 'u-4', 'GG', 'gems', 'CONSUMABLE', 1, 'USD', 'GPA.9', now(), false, false,
                            decode(\(token), 'hex'), 'purchase', 1, now())
                    """)
                // Its token's registry row, as projecting its purchase claims it (the migrator ran
                // this build's definitions, which ask the registry whose a token is).
                try c.execute("INSERT INTO ledger.token_keys VALUES (decode(\(token), 'hex'), 'u-4', 1)")
                try insert("notification:GG:n-3", "NotificationReceived",
                           #"{"storeCode": "GG", "notificationId": "n-3", "outcome": "asked", "effect": "ask", "purchaseTokenSha256": "\#(token)"}"#)

                // A notification parked, then released to its user: its stream moves to the user
                // (0011_stream_owner_moves.sql).
                try insert("notification:GG:n-4", "NotificationReceived",
                           #"{"storeCode": "GG", "notificationId": "n-4", "outcome": "parked", "payment": {"userId": "u-5"}}"#)
                try c.execute("""
                    INSERT INTO ledger.events (stream, version, type, data, occurred_at, prev_hash, hash)
                    VALUES ('notification:GG:n-4', 2, 'NotificationReleased',
                            '{"storeCode": "GG", "notificationId": "n-4", "userId": "u-5"}', now(), '\\x'::bytea, '\\x'::bytea)
                    """)
                try c.execute("UPDATE ledger.streams SET version = 2 WHERE stream = 'notification:GG:n-4'")

                let applied = try Migrator().migrate(c)
                #expect(Array(applied.prefix(2)) == ["0010_event_owner.sql", "0011_stream_owner_moves.sql"], "\(applied)")
                let owners = try c.query("SELECT user_id FROM ledger.events ORDER BY position").map { try $0.decode("user_id", as: String.self) }
                #expect(owners == ["u-1", "u-2", "", "", "u-4", "", "u-5"])
                let streamOwners = try c.query("SELECT user_id FROM ledger.streams ORDER BY stream").map { try $0.decode("user_id", as: String.self) }
                #expect(streamOwners == ["u-2", "", "u-4", "u-5", "u-1", ""])
                #expect(try c.count("""
                    SELECT count(*) FROM pg_trigger
                     WHERE tgrelid = 'ledger.events'::regclass AND tgname = 'events_append_only' AND tgenabled = 'A'
                    """) == 1)
                #expect(throws: PostgresError.self) { try c.execute("UPDATE ledger.events SET user_id = 'x'") }
            }
        }
    }
}

extension Connection {
    /// The unique constraints of ledger.events and ledger.streams and the log's other indexes, in
    /// the order of their text.
    fileprivate func logKeys() throws -> [String] {
        try query("""
            SELECT conname || ': ' || pg_get_constraintdef(oid) AS key FROM pg_constraint
             WHERE conrelid IN ('ledger.events'::regclass, 'ledger.streams'::regclass) AND contype IN ('p', 'u')
            UNION ALL
            SELECT 'index ' || i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
             WHERE x.indrelid = 'ledger.events'::regclass
               AND NOT EXISTS (SELECT FROM pg_constraint k WHERE k.conindid = x.indexrelid)
             ORDER BY 1
            """).map { try $0.decode("key", as: String.self) }
    }
}
