import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

extension HeavyReliabilityTests {
    /// Commands run on the workers: each sent to a worker of the test's choice, as a client
    /// connected there runs them, and through the entry point pushed down to the user's worker
    /// (`ledger.execute_user_commands`), as the library sends them.
    ///
    /// The keys' locks: an advisory lock is one node's, and a command on one worker would not
    /// wait for one on the other. On a distributed log (`ledger.commands_on_workers()`),
    /// `ledger.lock_keys` takes each key as a row lock of `ledger.key_locks` on the node that
    /// holds the key's shard, so two commands sharing a key wait for each other wherever they
    /// run, and the second decides by what the first committed, as on one server.
    @Suite("Commands run on the workers, on a Citus cluster of its own")
    struct CommandsOnWorkers {
        typealias M = AppleMint

        /// A cluster of its own with two workers, and a connection to its coordinator.
        static func withWorkersAppending(_ body: (PrivateCluster, Connection) async throws -> Void) async throws {
            try await PrivateCluster.with(citus: true) { cluster in
                let coordinator = try cluster.connect()
                defer { coordinator.close() }
                try #require(cluster.workers.count == 2)
                try await body(cluster, coordinator)
            }
        }

        /// The port of the worker that holds the shard of `table` for the distribution value
        /// `value` (a user, a registry's key).
        static func placedOn(_ coordinator: Connection, _ table: String, _ value: String) throws -> Int {
            try coordinator.count("""
                SELECT nodeport FROM pg_dist_shard_placement
                 WHERE shardid = get_shard_id_for_distribution_column('\(table)', '\(value)')
                """)
        }

        /// Moves the shard of `table` for `value`, and every shard colocated with it, from the
        /// node listening on `from` to the one on `to` (`citus_move_shard_placement`,
        /// `block_writes`), as the rebalancer does.
        static func moveShard(_ coordinator: Connection, _ table: String, _ value: String, from: Int, to: Int) throws {
            let node = { (port: Int) throws -> Int in
                try coordinator.count("SELECT nodeid FROM pg_dist_node WHERE nodeport = \(port) AND noderole = 'primary'")
            }
            let shard = try coordinator.count("SELECT get_shard_id_for_distribution_column('\(table)', '\(value)')")
            try coordinator.execute(SQL(unsafeSQL: "SELECT citus_move_shard_placement(\(shard), \(try node(from)), \(try node(to)), 'block_writes')"))
        }

        /// On a cluster of its own: runs `first` on the
        /// first worker in a transaction left open, then `second` on the second worker on a
        /// connection of its own. Checks that `second` is still waiting 3 s later, commits
        /// `first`, and hands both outcomes and a connection to the coordinator to `check`.
        static func whileAnotherWorkersCommandIsOpen(
            _ first: LedgerCommand, then second: LedgerCommand,
            check: ([CommandOutcome], [CommandOutcome], Connection) throws -> Void
        ) async throws {
            try await withWorkersAppending { cluster, coordinator in
                let open = try cluster.workers[0].connect()
                defer { open.close() }
                try open.execute("BEGIN")
                let firstOutcome = try open.executeBatch([first])
                let waiting = Background { () throws -> [CommandOutcome] in
                    let c = try cluster.workers[1].connect()
                    defer { c.close() }
                    return try c.executeBatch([second])
                }
                try await Task.sleep(for: .seconds(3))
                #expect(!waiting.isFinished, "the second worker's command did not wait for the first's keys")
                try open.execute("COMMIT")
                let secondOutcome = try #require(try await waiting.value())
                let all = try coordinator.count("SELECT count(*) FROM ledger.events")
                #expect(try coordinator.count("SELECT count(*) FROM ledger.events WHERE position >= 281474976710656") == all,
                        "every event was appended on a worker")
                try check(firstOutcome, secondOutcome, coordinator)
            }
        }

        static func purchase(user: String, seq: String, transaction: String) throws -> LedgerCommand {
            try LedgerCommand(line: Array("""
                {"type":"purchase","userId":"\(user)","storeCode":"AS","paymentSeq":"\(seq)","productId":"gems",\
                "productType":"CONSUMABLE","price":"0.99","currency":"USD","transactionId":"\(transaction)",\
                "purchaseTime":"2026-03-01T00:00:00Z","purchaseToken":"tok-\(seq)"}
                """.utf8))
        }

        /// A Google Play purchase whose purchase token is `token`.
        static func googlePurchase(user: String, seq: String, token: String) throws -> LedgerCommand {
            try LedgerCommand(line: Array("""
                {"type":"purchase","userId":"\(user)","storeCode":"GG","paymentSeq":"\(seq)","productId":"gems",\
                "productType":"CONSUMABLE","price":"0.99","currency":"USD","transactionId":"GPA.\(seq)",\
                "purchaseTime":"2026-03-01T00:00:00Z","purchaseToken":"\(token)"}
                """.utf8))
        }

        /// The App Store's REFUND of transaction t-9, which nobody recorded yet: parked.
        static func refundOfT9() throws -> LedgerCommand {
            try AppleMint().command(M.payload(
                "REFUND", uuid: "r-1", signed: "2026-03-02T00:00:00Z",
                transaction: M.transaction("t-9", original: "t-9", product: "gems", purchase: "2026-03-01T00:00:00Z",
                                           type: "Consumable", account: nil, extra: "\"revocationDate\":\(M.ms("2026-03-02T00:00:00Z"))")))
        }

        /// One paymentSeq recorded by two users on different workers at once: the first records
        /// it, the second waits for the first's keys and is refused `USER_INVALID`, as on one
        /// server; one payment, one claim, owned by the first. With advisory locks the second
        /// does not wait for the keys: it waits for the first's claim of the paymentSeq in the
        /// registry and fails on its unique key, an error instead of the contract's answer.
        @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
        func onePaymentSeqRecordedByTwoUsersOnTwoWorkersHasOneOwner() async throws {
            try await Self.whileAnotherWorkersCommandIsOpen(
                try Self.purchase(user: "u-1", seq: "P-1", transaction: "t-1"),
                then: try Self.purchase(user: "u-2", seq: "P-1", transaction: "t-2")
            ) { first, second, coordinator throws in
                #expect(first.map(\.status) == [.recorded])
                #expect(second.map(\.status) == [.rejected], "\(second)")
                #expect(second.first?.error?.code == .userInvalid, "\(second)")
                #expect(try coordinator.count("SELECT count(*) FROM ledger.events WHERE type = 'PurchaseRecorded'") == 1)
                #expect(try coordinator.count("SELECT count(*) FROM ledger.payment_keys WHERE payment_seq = 'P-1' AND user_id = 'u-1'") == 1)
                #expect(try coordinator.count("SELECT count(*) FROM ledger.payments") == 1)
                #expect(try coordinator.count("SELECT count(*) FROM ledger.key_locks WHERE key = 'payment:P-1'") == 1)
            }
        }

        /// One store transaction claimed by two users under two paymentSeqs on different workers
        /// at once: the second is refused `PAYMENT_CONFLICT`, and the transaction has one owner.
        @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
        func oneStoreTransactionClaimedByTwoUsersOnTwoWorkersHasOneOwner() async throws {
            try await Self.whileAnotherWorkersCommandIsOpen(
                try Self.purchase(user: "u-1", seq: "P-1", transaction: "t-1"),
                then: try Self.purchase(user: "u-2", seq: "P-2", transaction: "t-1")
            ) { first, second, coordinator throws in
                #expect(first.map(\.status) == [.recorded])
                #expect(second.first?.error?.code == .paymentConflict, "\(second)")
                #expect(try coordinator.count("SELECT count(*) FROM ledger.transaction_keys WHERE transaction_id = 't-1' AND user_id = 'u-1'") == 1)
                #expect(try coordinator.count("SELECT count(*) FROM ledger.payments") == 1)
            }
        }

        /// The library through the coordinator sends each call of the entry point with one
        /// owner's commands (`ledger.execute_user_commands`, ``CommandRouting``), and Citus runs it
        /// on the worker that holds the owner's shards: six users' purchases at once each append
        /// in the node group of their user's shard, none on the coordinator, and so does a refund,
        /// which names no user, by the owner the registries name; sixteen consumes of
        /// one payment at once consume it once; lines whose order counts (a paymentSeq bought by
        /// one user, then by another) answer as run one by one; `verify` is equal. Without the
        /// push-down every event is appended on the coordinator (group 0).
        @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
        func theLibrarySendsEachUsersCommandsToTheUsersWorker() async throws {
            try await Self.withWorkersAppending { cluster, coordinator in
                let ledger = Ledger(databaseURL: cluster.conninfo, poolSize: 4)
                let purchases = try (1...6).map { n in try Self.purchase(user: "u-\(n)", seq: "P-\(n)", transaction: "t-\(n)") }
                let recorded = try await withThrowingTaskGroup(of: CommandOutcome.Status.self) { tasks in
                    for purchase in purchases { tasks.addTask { try await ledger.execute(purchase).status } }
                    return try await tasks.reduce(into: [CommandOutcome.Status]()) { $0.append($1) }
                }
                #expect(recorded == Array(repeating: .recorded, count: 6))
                // A refund names no user: it goes by the owner the registries name.
                #expect(try await ledger.execute(.refund(paymentSeq: "P-2", time: nil, reason: nil)).status == .recorded)
                #expect(try coordinator.count("SELECT count(*) FROM ledger.events") == 7)
                // An event's position is its user's node's wherever the command ran
                // (ledger.event_on_owner_node); the statement that appends it takes one more of the
                // range of the node it runs on. So each worker's range moved by two an event it
                // holds, and the coordinator's not at all, only where every append ran on its
                // user's worker.
                let taken = try Self.positionsTaken(cluster), held = try Self.positionsHeld(coordinator)
                #expect(taken == Dictionary(uniqueKeysWithValues: taken.keys.map { ($0, 2 * held[$0, default: 0]) }),
                        "an event was not appended on its user's worker: positions taken \(taken), held \(held)")

                let consume = LedgerCommand.consume(paymentSeq: "P-1", userId: "u-1", purchaseToken: "tok-P-1", time: nil)
                let consumed = try await withThrowingTaskGroup(of: CommandOutcome.Status.self) { tasks in
                    for _ in 1...16 { tasks.addTask { try await ledger.execute(consume).status } }
                    return try await tasks.reduce(into: [CommandOutcome.Status]()) { $0.append($1) }
                }
                #expect(consumed.filter { $0 == .consumed }.count == 1, "\(consumed)")
                #expect(consumed.filter { $0 == .alreadyConsumed }.count == 15, "\(consumed)")
                await ledger.close()

                let lines = [("u-8", "Q-2", "t-q2"), ("u-7", "Q-1", "t-q1"), ("u-8", "Q-1", "t-q3")].map { user, seq, transaction in
                    #"{"type":"purchase","userId":"\#(user)","storeCode":"AS","paymentSeq":"\#(seq)","productId":"gems","productType":"CONSUMABLE","price":"0.99","currency":"USD","transactionId":"\#(transaction)","purchaseTime":"2026-03-01T00:00:00Z","purchaseToken":"tok-\#(seq)"}"#
                }
                let answers = try coordinator.ingest(lines)
                #expect(answers.map(\.status) == [.recorded, .recorded, .rejected], "\(answers)")
                #expect(answers.last?.error?.code == .userInvalid, "\(answers)")
                #expect(try Self.positionsTaken(cluster)[0] == 0, "an event was appended on the coordinator")
                let report = try ProjectionVerifier(connection: coordinator).verify()
                #expect(report.isEqual, "\(report.differences)")
            }
        }

        /// A user's commands run on three nodes: a purchase on the worker that does not hold the
        /// user's shard (a client connected there), a consume through the coordinator, a refund
        /// on that other worker again (as a refund routed by `''` runs on the worker of `''`'s
        /// shard when its payment's owner was not known yet). Each event takes the transaction id
        /// and a position of the node that stores it, the user's worker
        /// (`ledger.event_on_owner_node`), so the user's events are in one node group's order,
        /// which the readers follow: the catch-up reader and the webhooks' queue of the user have
        /// the purchase, the consume and the refund in that order. With each event in the range of
        /// the node that ran it, the consume holds the lowest position (the coordinator's range)
        /// and comes first in the webhooks' queue, before the purchase it consumes.
        @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
        func aUsersEventsAreInItsNodesOrderWhereverItsCommandsRun() async throws {
            try await Self.withWorkersAppending { cluster, coordinator in
                // An endpoint first: a new one starts at the log's end.
                let ledger = Ledger(databaseURL: cluster.conninfo, poolSize: 1)
                let (endpoint, _) = try await ledger.addWebhook(url: "http://127.0.0.1:9/unreachable")
                let home = try Self.placedOn(coordinator, "ledger.events", "u-1")
                let elsewhere = try #require(cluster.workers.first { $0.port != home }).connect()
                defer { elsewhere.close() }
                #expect(try elsewhere.executeBatch([try Self.purchase(user: "u-1", seq: "P-1", transaction: "t-1")]).map(\.status) == [.recorded])
                #expect(try coordinator.executeBatch([.consume(paymentSeq: "P-1", userId: "u-1", purchaseToken: "tok-P-1", time: nil)])
                    .map(\.status) == [.consumed])
                #expect(try elsewhere.executeBatch([.refund(paymentSeq: "P-1", time: nil, reason: nil)]).map(\.status) == [.recorded])

                let order = ["PurchaseRecorded", "PaymentConsumed", "PaymentRefunded"]
                let group = try coordinator.count("SELECT groupid FROM pg_dist_node WHERE nodeport = \(home) AND noderole = 'primary'")
                let events = try coordinator.query("SELECT type, position >> 48 AS g FROM ledger.events ORDER BY position")
                #expect(try events.map { try $0.decode("type", as: String.self) } == order)
                #expect(try events.map { try $0.decode("g", as: Int.self) } == [group, group, group],
                        "an event took the range of the node that ran its command")

                var reader = CatchUpReader()
                #expect(try reader.next(on: coordinator).map(\.type) == order)

                #expect(try await WebhookDispatcher(ledger: ledger).dispatchAll() >= 3)
                await ledger.close()
                let queued = try coordinator.query("""
                    SELECT args->>'type' AS type FROM ledger.jobs
                     WHERE kind = 'webhook.delivery' AND queue = \("webhook:\(endpoint.id):u-1") AND args->>'eventId' LIKE 'event:%'
                     ORDER BY queue_position, id
                    """).map { try $0.decode("type", as: String.self) }
                #expect(queued == order, "the user's webhooks are queued out of order")
                let report = try ProjectionVerifier(connection: coordinator).verify()
                #expect(report.isEqual, "\(report.differences)")
            }
        }

        /// How many positions of its range each node of `cluster` has handed out
        /// (`ledger.events_position_seq` on the node: the first is its group × 2^48 + 1), by node
        /// group.
        static func positionsTaken(_ cluster: PrivateCluster) throws -> [Int: Int64] {
            var taken: [Int: Int64] = [:]
            for node in [cluster] + cluster.workers {
                let c = try node.connect()
                defer { c.close() }
                let row = try c.query("""
                    SELECT (SELECT groupid FROM pg_dist_local_group) AS g,
                           CASE WHEN is_called THEN last_value ELSE last_value - 1 END
                             - ((SELECT groupid FROM pg_dist_local_group)::bigint << 48) AS taken
                      FROM ledger.events_position_seq
                    """)[0]
                taken[try row.decode("g", as: Int.self)] = try row.decode("taken", as: Int64.self)
            }
            return taken
        }

        /// A user whose shard of the log `worker` holds: the first of `u-1`, `u-2`, … placed there.
        static func user(on worker: PrivateCluster, _ coordinator: Connection) throws -> String {
            for n in 1...100 where try placedOn(coordinator, "ledger.events", "u-\(n)") == worker.port { return "u-\(n)" }
            throw TestSetupError("none of u-1 … u-100 is placed on the worker on port \(worker.port)")
        }

        /// How many events each node group's range holds (`position >> 48`).
        static func positionsHeld(_ coordinator: Connection) throws -> [Int: Int64] {
            var held: [Int: Int64] = [:]
            for row in try coordinator.query("SELECT (position >> 48)::int AS g, count(*) AS n FROM ledger.events GROUP BY 1") {
                held[try row.decode("g", as: Int.self)] = try row.decode("n", as: Int64.self)
            }
            return held
        }

        /// One Google purchase token recorded by two users, first by a user of the second worker,
        /// whose range of positions is the higher, then by a user of the first worker (an event's
        /// position is its user's node's, `ledger.event_on_owner_node`): the token stays with the
        /// first payment, whose user the registry names, and the second payment's event says so
        /// (`purchaseTokenClaimed: false`, `ledger.payment_token_claim`). `verify` replays the log
        /// in the order of positions, which meets the second payment first, and is equal. Without
        /// the mark the replay gives the token to the second user: `verify` names `token_keys`
        /// (found on the dev cluster, 2026-12-07), and a rebuild would hand the token's later
        /// notifications to the other user.
        @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
        func aTokenStaysWithItsFirstPaymentWhenTheSecondHoldsTheLowerPosition() async throws {
            try await Self.withWorkersAppending { cluster, coordinator in
                let first = try cluster.workers[1].connect(), second = try cluster.workers[0].connect()
                defer { [first, second].forEach { $0.close() } }
                let one = try Self.user(on: cluster.workers[1], coordinator), two = try Self.user(on: cluster.workers[0], coordinator)
                #expect(try first.executeBatch([try Self.googlePurchase(user: one, seq: "G-1", token: "shared")]).map(\.status) == [.recorded])
                #expect(try second.executeBatch([try Self.googlePurchase(user: two, seq: "G-2", token: "shared")]).map(\.status) == [.recorded])
                let order = try coordinator.query("SELECT data->>'paymentSeq' AS seq FROM ledger.events ORDER BY position")
                    .map { try $0.decode("seq", as: String.self) }
                #expect(order == ["G-2", "G-1"], "the second payment holds the lower position")
                #expect(try coordinator.count("SELECT count(*) FROM ledger.token_keys WHERE user_id = '\(one)'") == 1)
                #expect(try coordinator.count("SELECT count(*) FROM ledger.token_keys") == 1)
                #expect(try coordinator.count("""
                    SELECT count(*) FROM ledger.events WHERE user_id = '\(two)' AND data->>'purchaseTokenClaimed' = 'false'
                    """) == 1)
                #expect(try coordinator.keyRegistryAgreement()["token_keys"]?.disagreeing == 0)
                let report = try ProjectionVerifier(connection: coordinator).verify()
                #expect(report.isEqual, "\(report.differences)")
            }
        }

        /// A product declared on a worker, then declared again with another price through the
        /// coordinator, as a release before the appends on the owner's node appended them (each
        /// event in the range of the node that ran its command: the column `tx` given its old
        /// default): the later declaration holds the lower position (the coordinator's range is
        /// below the workers'), and the live table and a replay both keep it. The replay picks a
        /// product's latest declaration by its stream's version, not by position: by position
        /// `verify` named `products.price` (the replay kept the first price; found on the dev
        /// cluster, 2026-12-07). Then `ledger.install_appends_on_owner_nodes`, as the next
        /// `ledger migrate` runs it, and a third declaration through the coordinator: it takes a
        /// position of the node that holds it, above the first, and stands too.
        @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
        func aProductsLatestDeclarationStandsWhenItHoldsTheLowerPosition() async throws {
            try await Self.withWorkersAppending { cluster, coordinator in
                let worker = try cluster.workers[0].connect()
                defer { worker.close() }
                let declare = { (price: Price) in
                    LedgerCommand.product(storeCode: .googlePlay, productId: "gems", productType: .consumable,
                                          price: price, currency: "USD")
                }
                try coordinator.execute("ALTER TABLE ledger.events ALTER COLUMN tx SET DEFAULT pg_current_xact_id()")
                #expect(try worker.executeBatch([declare("1.99")]).map(\.status) == [.recorded])
                #expect(try coordinator.executeBatch([declare("2.99")]).map(\.status) == [.recorded])
                let prices = { try coordinator.query("SELECT data->>'price' AS price FROM ledger.events ORDER BY position")
                    .map { try $0.decode("price", as: String.self) } }
                #expect(try prices() == ["2.99", "1.99"], "the later declaration holds the lower position")
                #expect(try coordinator.count("SELECT count(*) FROM ledger.products WHERE price = 2.99") == 1)
                var report = try ProjectionVerifier(connection: coordinator).verify()
                #expect(report.isEqual, "\(report.differences)")

                #expect(try coordinator.query("SELECT ledger.install_appends_on_owner_nodes() AS changed")[0].decode("changed", as: Bool.self))
                #expect(try coordinator.executeBatch([declare("3.99")]).map(\.status) == [.recorded])
                #expect(try prices() == ["2.99", "1.99", "3.99"])
                #expect(try coordinator.count("SELECT count(*) FROM ledger.products WHERE price = 3.99") == 1)
                report = try ProjectionVerifier(connection: coordinator).verify()
                #expect(report.isEqual, "\(report.differences)")
            }
        }

        /// The span statements on the user's own shard tables (`ledger.install_shard_path`, which
        /// `ledger migrate` applies to `refresh_spans` and `refresh_states` on a distributed log).
        /// A subscription bought and renewed through the library, its commands pushed down: every
        /// projection equals a replay. Then each function called by hand on each worker, in a
        /// transaction that has read the user's events through Citus: on the worker that holds the
        /// user's shard they run as prepared statements of the session on the shard's tables (two
        /// each, named by the function and the shard), on the other through Citus, preparing
        /// nothing, and both leave the spans and the states as they were. Without the shard path
        /// the first worker prepares nothing either.
        @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
        func theSpanStatementsRunOnTheUsersShardTablesWhereTheWorkerHoldsThem() async throws {
            try await Self.withWorkersAppending { cluster, coordinator in
                let ledger = Ledger(databaseURL: cluster.conninfo, poolSize: 2)
                let first = Fixture.subscription("S-1", user: "u-1", transaction: "L-1",
                                                 from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z")
                let renewal = Fixture.subscription("S-2", user: "u-1", transaction: "L-1b", original: "L-1",
                                                   from: "2026-02-01T00:00:00Z", to: "2026-03-01T00:00:00Z")
                #expect(try await ledger.execute(.record(first, kind: .purchase)).status == .recorded)
                #expect(try await ledger.execute(.record(renewal, kind: .renewal)).status == .recorded)
                await ledger.close()
                let report = try ProjectionVerifier(connection: coordinator).verify()
                #expect(report.isEqual, "\(report.differences)")

                let state = """
                    SELECT (SELECT string_agg(x::text, ',' ORDER BY x::text) FROM ledger.entitled_spans x)
                           || ' | ' || (SELECT string_agg(x::text, ',' ORDER BY x::text) FROM ledger.lineage_states x) AS s
                    """
                let before = try coordinator.query(SQL(unsafeSQL: state))[0].decode("s", as: String.self)
                let port = try coordinator.count("""
                    SELECT nodeport FROM pg_dist_shard_placement
                     WHERE shardid = get_shard_id_for_distribution_column('ledger.events', 'u-1')
                    """)
                for worker in cluster.workers {
                    let c = try worker.connect()
                    defer { c.close() }
                    try c.execute("BEGIN")
                    _ = try c.query("SELECT max(position) AS p FROM ledger.events WHERE user_id = 'u-1'")
                    try c.execute("SELECT ledger.refresh_spans(ARRAY['AS'], ARRAY['L-1'], ARRAY['u-1'])")
                    try c.execute("SELECT ledger.refresh_states(ARRAY['AS'], ARRAY['L-1'], ARRAY['-infinity'::timestamptz], ARRAY['u-1'])")
                    // (The library's connection prepares its own statements, ledger_s1, …)
                    let prepared = try c.query("SELECT name FROM pg_prepared_statements WHERE name LIKE 'ledger\\_refresh\\_%' ORDER BY name")
                        .map { try $0.decode("name", as: String.self) }
                    if worker.port == port {
                        #expect(prepared.count == 4, "\(prepared)")
                        #expect(prepared.filter { $0.hasPrefix("ledger_refresh_spans_") }.count == 2, "\(prepared)")
                        #expect(prepared.filter { $0.hasPrefix("ledger_refresh_states_") }.count == 2, "\(prepared)")
                    } else {
                        #expect(prepared.isEmpty, "the worker without the user's shard prepared \(prepared)")
                    }
                    #expect(try c.query(SQL(unsafeSQL: state))[0].decode("s", as: String.self) == before)
                    try c.execute("COMMIT")
                }
                #expect(try ProjectionVerifier(connection: coordinator).verify().isEqual)
            }
        }

        /// A store notification about a transaction nobody recorded yet, parked on one worker, and
        /// the SDK's line recording that transaction on the other at once: the line waits for the
        /// notification's keys, then finds it parked and releases it, so the refund it carries
        /// applies. The two share no unique key, only the store transaction's lock: with
        /// advisory locks the line neither waits nor sees the parked notification, which stays
        /// parked and the payment unrefunded.
        @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
        func aNotificationAndAnSDKLineForOneTransactionOnTwoWorkersMeet() async throws {
            let refund = try Self.refundOfT9()
            try await Self.whileAnotherWorkersCommandIsOpen(refund, then: try Self.purchase(user: "u-1", seq: "P-9", transaction: "t-9")) {
                first, second, coordinator throws in
                #expect(first.map(\.status) == [.parked], "\(first)")
                #expect(second.map(\.status) == [.recorded], "\(second)")
                #expect(try coordinator.count("SELECT count(*) FROM ledger.notifications WHERE parked") == 0, "the notification stayed parked")
                #expect(try coordinator.count("SELECT count(*) FROM ledger.events WHERE type = 'NotificationReleased' AND user_id = 'u-1'") == 1)
                #expect(try coordinator.count("SELECT count(*) FROM ledger.payments WHERE payment_seq = 'P-9' AND refunded_at IS NOT NULL") == 1)
            }
        }

        /// The window between two nodes' `COMMIT PREPARED`: a REFUND parked on the first worker
        /// and the SDK's line for its transaction on the second, the line past the keys' locks
        /// (`ledger.lock_keys` made to take only the writers' gate on every node, which is what a
        /// lock released on the key's node before the park commits on the node of '' amounts to).
        /// The line records the payment and misses the notification, which stays parked with its
        /// owner known. Two sweeps (`ledger.release_owned_parked`) then run at once on the two
        /// workers: the second waits on the parked row's lock for the first's 2PC, finds it
        /// released, and releases nothing; the refund applies once, and `Ledger.releaseOwnedParked`
        /// through the coordinator finds nothing left. Without the row's lock the second sweep
        /// fails ("has no ownerless stream to release").
        @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
        func aNotificationALineMissedBetweenTwoNodesCommitsIsReleasedOnceBySweeps() async throws {
            let refund = try Self.refundOfT9()
            try await Self.withWorkersAppending { cluster, coordinator in
                try coordinator.takeTheKeysLocksOut()
                let first = try cluster.workers[0].connect(), second = try cluster.workers[1].connect()
                defer { [first, second].forEach { $0.close() } }
                try first.execute("BEGIN")
                #expect(try first.executeBatch([refund]).map(\.status) == [.parked])
                #expect(try second.executeBatch([try Self.purchase(user: "u-1", seq: "P-9", transaction: "t-9")]).map(\.status) == [.recorded])
                try first.execute("COMMIT")
                #expect(try coordinator.count("SELECT count(*) FROM ledger.notifications WHERE parked") == 1)

                let from = Int64.min
                try first.execute("BEGIN")
                #expect(try first.count("SELECT released::bigint FROM ledger.release_owned_parked(\(from), NULL)") == 1)
                let racing = Background { () throws -> Int in
                    let c = try cluster.workers[1].connect()
                    defer { c.close() }
                    return try c.count("SELECT coalesce(released, -1)::bigint FROM ledger.release_owned_parked(\(from), NULL)")
                }
                try await Task.sleep(for: .seconds(3))
                #expect(!racing.isFinished, "the second sweep did not wait for the first's release")
                try first.execute("COMMIT")
                #expect(try await racing.value() == 0)

                let ledger = Ledger(databaseURL: cluster.conninfo, poolSize: 1)
                #expect(try await ledger.releaseOwnedParked() == 0)
                await ledger.close()
                #expect(try coordinator.count("SELECT count(*) FROM ledger.notifications WHERE parked") == 0)
                #expect(try coordinator.count("SELECT count(*) FROM ledger.events WHERE type = 'NotificationReleased' AND user_id = 'u-1'") == 1)
                #expect(try coordinator.count("SELECT count(*) FROM ledger.events WHERE type = 'PaymentRefunded'") == 1)
                #expect(try coordinator.count("SELECT count(*) FROM ledger.payments WHERE payment_seq = 'P-9' AND refunded_at IS NOT NULL") == 1)
                let report = try ProjectionVerifier(connection: coordinator).verify()
                #expect(report.isEqual, "\(report.differences)")
            }
        }

        /// A Google purchase recorded on a worker with the acknowledgement check its line asks
        /// for (`LedgerCommand.askingStores`): the job is written in the command's transaction to
        /// the coordinator's jobs, a Citus local table (the plan's `coordinator` placement),
        /// caused by the event the worker appended, and a runner's claim on the coordinator takes
        /// it. Without the jobs in Citus's metadata the worker has no such table and the command
        /// fails ("relation ledger.jobs does not exist").
        @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
        func aGooglePurchaseOnAWorkerAddsItsJobOnTheCoordinator() async throws {
            var stores = StoreConfiguration(googlePackageNames: ["com.example.game"])
            stores.asksGoogle = true
            let line = try LedgerCommand(line: Array("""
                {"type":"purchase","userId":"u-g","storeCode":"GG","paymentSeq":"G-1","productId":"gems",\
                "productType":"CONSUMABLE","price":"0.99","currency":"USD","transactionId":"GPA.1",\
                "purchaseTime":"2026-03-01T00:00:00Z","purchaseToken":"tok-G-1"}
                """.utf8)).askingStores(stores)
            try await Self.withWorkersAppending { cluster, coordinator in
                let worker = try cluster.workers[0].connect()
                defer { worker.close() }
                #expect(try worker.executeBatch([line]).map(\.status) == [.recorded])
                let position = try coordinator.count("SELECT position FROM ledger.events WHERE type = 'PurchaseRecorded'")
                #expect(position >= 281_474_976_710_656, "appended on a worker")
                #expect(try coordinator.count("""
                    SELECT count(*) FROM ledger.jobs WHERE kind = 'google.check' AND caused_by = \(position)
                    """) == 1)
                #expect(try coordinator.count("SELECT count(*) FROM ledger.claim_jobs(5, '1 minute', ARRAY['google.check'])") == 1)
                #expect(try coordinator.count("SELECT count(*) FROM ledger.jobs WHERE leased_until IS NOT NULL") == 1)
            }
        }

        /// A subscription bought on one worker and renewed on the other: each command defers its
        /// lineage's spans to its own commit in its node's scratch tables
        /// (`ledger.make_spans_scratch`, made on each worker by `ledger migrate`), which settle
        /// them there, so the subscription runs to the renewal's expiry, no node keeps a note,
        /// and a verify finds the projections equal to a replay. Without a worker's own tables the
        /// purchase fails ("relation ledger.spans_due does not exist").
        @Test(.enabled(if: PrivateCluster.citusAsked, "a Citus state: scripts/dev test runs it with LEDGER_TEST_CITUS=1"))
        func aSubscriptionBoughtOnOneWorkerAndRenewedOnTheOtherSettlesItsSpans() async throws {
            func line(_ kind: String, _ seq: String, _ transaction: String, from: String, to: String) -> String {
                """
                {"type":"\(kind)","userId":"u-s","storeCode":"AS","paymentSeq":"\(seq)","productId":"premium_month",\
                "productType":"AUTO_RENEWABLE","price":"9.99","currency":"USD","transactionId":"\(transaction)",\
                "originalTransactionId":"o-1","purchaseTime":"\(from)","expiryTime":"\(to)","purchaseToken":"tok-\(seq)"}
                """
            }
            try await Self.withWorkersAppending { cluster, coordinator in
                let first = try cluster.workers[0].connect(), second = try cluster.workers[1].connect()
                defer { [first, second].forEach { $0.close() } }
                #expect(try first.ingest([line("purchase", "S-1", "o-1", from: "2026-03-01T00:00:00Z", to: "2026-04-01T00:00:00Z")])
                    .map(\.status) == [.recorded])
                #expect(try second.ingest([line("renewal", "S-2", "o-2", from: "2026-04-01T00:00:00Z", to: "2026-05-01T00:00:00Z")])
                    .map(\.status) == [.recorded])
                let all = try coordinator.count("SELECT count(*) FROM ledger.events")
                #expect(try coordinator.count("SELECT count(*) FROM ledger.events WHERE position >= 281474976710656") == all)
                let subscription = try #require(try Subscription.fetchAll(coordinator, userId: "u-s", at: Fixture.time("2026-04-15T00:00:00Z"),
                                                                          includeExpired: true).first)
                #expect(subscription.status == .active && subscription.expiryTime == Fixture.time("2026-05-01T00:00:00Z"), "\(subscription)")
                #expect(try coordinator.count("SELECT count(*) FROM ledger.entitled_spans WHERE user_id = 'u-s'") >= 1)
                for node in [coordinator, first, second] {
                    #expect(try node.count("SELECT count(*) FROM ledger.spans_due") == 0)
                    #expect(try node.count("SELECT count(*) FROM ledger.spans_settle") == 0)
                }
                let report = try ProjectionVerifier(connection: coordinator).verify()
                #expect(report.isEqual && report.events == all, "\(report.differences)")
            }
        }
    }
}
