/// How the library sends commands where the ledger is distributed on a Citus cluster
/// (docs/scale-out.md, "The entry point on the user's worker"): each call of the entry point
/// carries the commands of one owner, `ledger.execute_user_commands(owner, commands)`, which Citus
/// runs on the worker that holds the owner's shards. Citus pushes nothing down inside a
/// transaction of several statements, so a batch becomes one call per owner, each a transaction
/// of its own. On one server a batch stays one call of `ledger.execute_commands`.
package enum CommandRouting {
    /// Commands sent in one call, and the owner the call is routed by: nil sends them through the
    /// coordinator (`ledger.execute_commands`).
    package struct Group: Sendable, Hashable {
        package var owner: String?
        /// The commands' indices in the batch, in input order.
        package var indices: [Int]

        package init(owner: String?, indices: [Int]) {
            self.owner = owner
            self.indices = indices
        }
    }

    /// The owner a command is routed by: the user it names; `""` when it names none and the
    /// ledger finds its owner from its keys (a store notification, a refund by paymentSeq, a
    /// cancel by lineage), where `''`'s shard holds the parked notifications; nil for a product
    /// declaration, which writes the catalog of every node and asks every user's payments of the
    /// product, and runs on the coordinator.
    package static func owner(of command: LedgerCommand) -> String? {
        switch command {
        case .record(let payment, _): payment.userId
        case .consume(_, let userId, _, _), .restore(let userId, _, _, _), .accountLink(let userId, _, _): userId
        case .refund, .cancel, .notification: ""
        case .product: nil
        }
    }

    /// The keys unique across users that a command names (its paymentSeq, store transaction,
    /// lineage, Google token, account token), as far as the library knows them; nil when it
    /// cannot say (a store notification's are in its signed payload, a product declaration's
    /// are every payment of the product).
    static func keys(of command: LedgerCommand) -> [String]? {
        func keys(_ payment: Payment) -> [String] {
            ["seq:" + payment.paymentSeq, "tx:\(payment.storeCode.rawValue):" + payment.transactionId,
             "token:" + payment.purchaseToken] + (payment.lineageId.map { ["lineage:\(payment.storeCode.rawValue):" + $0] } ?? [])
        }
        switch command {
        case .record(let payment, _): return keys(payment)
        case .consume(let seq, _, _, _), .refund(let seq, _, _): return ["seq:" + seq]
        case .restore(_, _, _, let purchases): return purchases.flatMap(keys)
        case .cancel(let store, let original, _): return ["lineage:\(store.rawValue):" + original]
        case .accountLink(_, let store, let token): return ["account:\(store.rawValue):" + token]
        case .notification, .product: return nil
        }
    }

    /// The calls for concurrent commands, which have no order among them (the calls that group
    /// commit gathers): one per owner, in the order each owner first comes.
    package static func byOwner(_ commands: [LedgerCommand]) -> [Group] {
        var groups: [Group] = []
        var index: [String?: Int] = [:]
        for (i, command) in commands.enumerated() {
            add(i, owner: owner(of: command), to: &groups, index: &index)
        }
        return groups
    }

    /// The calls for commands in an order that counts (the lines of a file), to be run one after
    /// another: the answers are those of the commands run one by one in input order. Commands of
    /// different owners that share no key cannot change each other's answers, so a run of them
    /// becomes one call per owner. A command that shares a key with another owner's command of
    /// the run ends the run before it; one whose keys the library cannot know (a notification, a
    /// product) or whose owner the ledger finds (`""`) is a run of its own, joined by the same
    /// kind of commands that follow it.
    package static func inOrder(_ commands: [LedgerCommand]) -> [Group] {
        var groups: [Group] = []
        var run: [String?: Int] = [:]         // the run's group of each owner
        var claimed: [String: String] = [:]   // the run's keys and their owners
        func endRun() {
            run = [:]
            claimed = [:]
        }
        for (i, command) in commands.enumerated() {
            guard let owner = owner(of: command), !owner.isEmpty, let keys = keys(of: command) else {
                let owner = owner(of: command)
                if run.isEmpty, let last = groups.last, last.owner == owner {
                    groups[groups.count - 1].indices.append(i)
                } else {
                    endRun()
                    groups.append(Group(owner: owner, indices: [i]))
                }
                continue
            }
            if keys.contains(where: { claimed[$0].map { $0 != owner } ?? false }) {
                endRun()
            }
            for key in keys { claimed[key] = owner }
            add(i, owner: owner, to: &groups, index: &run)
        }
        return groups
    }

    /// The groups of `""` split by the owners the registries name now (`owners`, the commands'
    /// indices in, `ledger.command_owners` out), so that a refund, a cancel or a notification
    /// about a known payment runs on its user's worker and appends among that user's events:
    /// positions order one node's events only. Each command joins the group before it when that
    /// one is its owner's (which keeps the calls' order, the last group running last), or starts
    /// one. The other groups stay as they are.
    package static func resolvingOwners(_ groups: [Group], _ owners: ([Int]) throws -> [String]) rethrows -> [Group] {
        var resolved: [Group] = []
        for group in groups {
            guard group.owner == "" else {
                resolved.append(group)
                continue
            }
            for (i, owner) in zip(group.indices, try owners(group.indices)) {
                if resolved.last?.owner == owner {
                    resolved[resolved.count - 1].indices.append(i)
                } else {
                    resolved.append(Group(owner: owner, indices: [i]))
                }
            }
        }
        return resolved
    }

    /// Adds command `i` to its owner's group in `index`, or to a new group at the end.
    private static func add(_ i: Int, owner: String?, to groups: inout [Group], index: inout [String?: Int]) {
        if let g = index[owner] {
            groups[g].indices.append(i)
        } else {
            index[owner] = groups.count
            groups.append(Group(owner: owner, indices: [i]))
        }
    }
}
