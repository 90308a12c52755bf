import Foundation
import LedgerTestSupport
import Postgres
import PurchaseLedger
import Testing

/// How the library groups a batch into calls of the entry point on a Citus cluster
/// (``CommandRouting``), and the routed entry point on one server. The cluster runs them in
/// `CommandsOnWorkers.theLibrarySendsEachUsersCommandsToTheUsersWorker`.
@Suite("Commands routed by owner")
struct CommandRoutingTests {
    static func purchase(_ user: String, _ seq: String, _ transaction: String) throws -> LedgerCommand {
        try LedgerCommand(line: Array("""
            {"type":"purchase","userId":"\(user)","storeCode":"AS","paymentSeq":"\(seq)","productId":"gems",\
            "productType":"CONSUMABLE","price":"0.99","currency":"USD","transactionId":"\(transaction)",\
            "purchaseTime":"2026-03-01T00:00:00Z","purchaseToken":"tok-\(seq)"}
            """.utf8))
    }

    static let refund = LedgerCommand.refund(paymentSeq: "P-1", time: nil, reason: nil)
    static let product = LedgerCommand.product(storeCode: .googlePlay, productId: "gems", productType: .consumable)

    /// Concurrent calls: one call per owner, in the order each owner first comes; a command whose
    /// owner the ledger finds goes by `""`, a product declaration through the coordinator (nil).
    @Test func concurrentCommandsGoAsOneCallPerOwner() throws {
        let commands = [try Self.purchase("u-1", "P-1", "t-1"), try Self.purchase("u-2", "P-2", "t-2"), Self.refund,
                        .consume(paymentSeq: "P-1", userId: "u-1", purchaseToken: nil, time: nil), Self.product]
        #expect(CommandRouting.byOwner(commands) == [
            .init(owner: "u-1", indices: [0, 3]), .init(owner: "u-2", indices: [1]),
            .init(owner: "", indices: [2]), .init(owner: nil, indices: [4]),
        ])
    }

    /// Lines in an order that counts: owners that share no key go as one call each; a key
    /// another owner's command of the run named ends the run; a command the library cannot see
    /// the keys of is a run of its own, joined by the like commands that follow it.
    @Test func linesInOrderEndARunWhereAnotherOwnerSharesAKey() throws {
        let commands = [
            try Self.purchase("u-2", "P-2", "t-2"),      // 0
            try Self.purchase("u-1", "P-1", "t-1"),      // 1
            try Self.purchase("u-2", "P-3", "t-3"),      // 2: no key of u-1's: same run
            try Self.purchase("u-2", "P-1", "t-9"),      // 3: P-1 is u-1's in this run: a new run
            Self.refund, Self.refund,                    // 4, 5: the ledger finds the owner
            Self.product,                                // 6
            try Self.purchase("u-1", "P-4", "t-4"),      // 7
        ]
        #expect(CommandRouting.inOrder(commands) == [
            .init(owner: "u-2", indices: [0, 2]), .init(owner: "u-1", indices: [1]),
            .init(owner: "u-2", indices: [3]),
            .init(owner: "", indices: [4, 5]),
            .init(owner: nil, indices: [6]),
            .init(owner: "u-1", indices: [7]),
        ])
        // The store transaction, the lineage and the account token are keys too.
        let sameTransaction = [try Self.purchase("u-1", "P-1", "t-1"), try Self.purchase("u-2", "P-2", "t-1")]
        #expect(CommandRouting.inOrder(sameTransaction).count == 2)
        let cancel = LedgerCommand.cancel(storeCode: .appStore, originalTransactionId: "t-1", time: nil)
        #expect(CommandRouting.owner(of: cancel) == "")
        let links = [LedgerCommand.accountLink(userId: "u-1", storeCode: .appStore, appAccountToken: "a"),
                     .accountLink(userId: "u-2", storeCode: .appStore, appAccountToken: "a"),
                     .accountLink(userId: "u-1", storeCode: .appStore, appAccountToken: "b")]
        #expect(CommandRouting.inOrder(links).map(\.indices) == [[0], [1], [2]])
    }

    /// A refund, a cancel and a store notification name no user: the library asks the registries
    /// for their owners (`ledger.command_owners`) and routes each by it, `""` while none is known
    /// (a refund of an unknown payment), so that a known payment's refund runs on its user's
    /// worker and appends among that user's events. A group of `""` is split by those owners,
    /// consecutive commands of one owner in one call, after the group before it when that one is
    /// the same owner's.
    @Test func aRefundACancelAndANotificationGoByTheOwnerTheRegistriesName() async throws {
        let subscription = try LedgerCommand(line: Array("""
            {"type":"purchase","userId":"u-2","storeCode":"AS","paymentSeq":"S-1","productId":"premium_month",\
            "productType":"AUTO_RENEWABLE","price":"4.99","currency":"USD","transactionId":"t-s1",\
            "originalTransactionId":"t-s1","purchaseTime":"2026-03-01T00:00:00Z","expiryTime":"2026-04-01T00:00:00Z",\
            "purchaseToken":"tok-S-1"}
            """.utf8))
        let asked: [LedgerCommand] = [Self.refund, .cancel(storeCode: .appStore, originalTransactionId: "t-s1", time: nil),
                                      .refund(paymentSeq: "P-unknown", time: nil, reason: nil), try Self.purchase("u-3", "P-3", "t-3")]
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                #expect(try c.commandOwners(asked) == ["", "", "", "u-3"])
                _ = try c.executeBatch([try Self.purchase("u-1", "P-1", "t-1"), subscription])
                #expect(try c.commandOwners(asked) == ["u-1", "u-2", "", "u-3"])
            }
        }
        let groups = [CommandRouting.Group(owner: "u-1", indices: [0]), .init(owner: "", indices: [1, 2, 3, 4]),
                      .init(owner: nil, indices: [5])]
        let owners = [1: "u-1", 2: "u-1", 3: "", 4: "u-2"]
        #expect(CommandRouting.resolvingOwners(groups) { $0.map { owners[$0]! } } == [
            .init(owner: "u-1", indices: [0, 1, 2]), .init(owner: "", indices: [3]), .init(owner: "u-2", indices: [4]),
            .init(owner: nil, indices: [5]),
        ])
    }

    /// The calls of ``CommandRouting/inOrder(_:)``, run one after another through the routed
    /// entry point, answer as the commands run one by one: a paymentSeq that one user buys and
    /// another then buys is the second's `USER_INVALID`, a consume after its purchase consumes.
    /// Grouped by owner alone, the second user's call would run first and take the paymentSeq.
    @Test func callsInOrderAnswerAsTheCommandsOneByOne() async throws {
        let commands = [
            try Self.purchase("u-2", "P-2", "t-2"),
            try Self.purchase("u-1", "P-1", "t-1"),
            try Self.purchase("u-2", "P-1", "t-9"),
            LedgerCommand.consume(paymentSeq: "P-1", userId: "u-1", purchaseToken: "tok-P-1", time: nil),
            LedgerCommand.consume(paymentSeq: "P-2", userId: "u-2", purchaseToken: "tok-P-2", time: nil),
        ]
        let expected: [CommandOutcome.Status] = [.recorded, .recorded, .rejected, .consumed, .consumed]
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                var answers = [CommandOutcome?](repeating: nil, count: commands.count)
                for group in CommandRouting.inOrder(commands) {
                    let outcomes = try c.executeBatch(group.indices.map { commands[$0] }, routedBy: group.owner)
                    for (i, outcome) in zip(group.indices, outcomes) { answers[i] = outcome }
                }
                #expect(answers.map { $0?.status } == expected, "\(answers)")
                #expect(answers[2]?.error?.code == .userInvalid)
            }
        }
    }

    /// On one server commands run where they are sent: `ledger.commands_on_workers()` is false,
    /// the keys' locks stay advisory (no row of `ledger.key_locks`), the library sends a batch as
    /// one call (``Ledger/runsCommandsOnWorkers()``), and the entry point routed by an owner
    /// (`ledger.execute_user_commands`) is the plain one.
    @Test func onOneServerTheRoutedEntryPointIsThePlainOne() async throws {
        try await TestDatabase.with { db in
            try db.withConnection { c throws in
                #expect(try c.commandsOnWorkers() == false)
                let outcomes = try c.executeBatch([try Self.purchase("u-1", "P-1", "t-1"), try Self.purchase("u-1", "P-1", "t-1")],
                                                  routedBy: "u-1")
                #expect(outcomes.map(\.status) == [.recorded, .duplicate])
                #expect(try c.count("SELECT count(*) FROM ledger.key_locks") == 0)
                #expect(try c.count("SELECT count(*) FROM ledger.payments") == 1)
            }
            let ledger = Ledger(databaseURL: db.conninfo, poolSize: 1)
            #expect(await ledger.runsCommandsOnWorkers() == false)
            await ledger.close()
        }
    }
}
