import Foundation
import Postgres

extension Ledger {
    /// The user's payments whose goods were not handed out yet, on the given stores (all when
    /// empty), ordered by purchase time then paymentSeq (docs/contract.md §3.1).
    public func unconsumed(userId: String, stores: Set<StoreCode> = []) async throws -> [UnconsumedPayment] {
        try await read { try UnconsumedPayment.fetchAll($0, userId: userId, stores: stores) }
    }

    /// The user's subscriptions at an instant (default now): active ones, or all with
    /// `includeExpired`; ordered by store then originalTransactionId (docs/contract.md §3.2).
    public func subscriptions(userId: String, stores: Set<StoreCode> = [], at instant: Date = Date(),
                              includeExpired: Bool = false) async throws -> [Subscription] {
        try await read {
            try Subscription.fetchAll($0, userId: userId, stores: stores, at: instant, includeExpired: includeExpired)
        }
    }

    /// A one-screen picture of the whole ledger, with subscriptions evaluated at `instant`.
    public func summary(at instant: Date = Date()) async throws -> LedgerSummary {
        try await read { try LedgerSummary.fetch($0, at: instant) }
    }
}

extension Ledger {
    /// The payment `key` names, with its owner and its state, or nil when the ledger has none.
    public func lookup(_ key: PaymentKey) async throws -> PaymentRecord? {
        try await read { try PaymentRecord.fetch($0, key) }
    }
}

extension Ledger {
    /// The most entries one history answers.
    public static let maxHistoryLimit = 10_000

    /// Every event about the user's payments, subscriptions, restores, account links and store
    /// notifications, the latest `limit` of them in time order, each with what it changed and the
    /// jobs it caused. A user the ledger does not know has an empty history.
    ///
    /// Throws ``LedgerError`` `INVALID_INPUT` naming `userId` when the contract refuses the id, or
    /// `limit` when it is not 1 to ``maxHistoryLimit``.
    public func history(userId: String, limit: Int = 1000) async throws -> UserHistory {
        try LedgerCommand.validateUserId(userId)
        guard (1...Self.maxHistoryLimit).contains(limit) else {
            throw LedgerError.invalid("limit", "expected 1 to \(Self.maxHistoryLimit), got \(limit)")
        }
        return try await read { try UserHistory.fetch($0, userId: userId, limit: limit) }
    }
}

extension Ledger {
    /// Runs a query's `body` where queries read: a replica that has replayed this ledger's own
    /// commands, else the primary (``ReadReplicas``).
    func read<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await replicas.withConnection(primary: pool, body)
    }
}
