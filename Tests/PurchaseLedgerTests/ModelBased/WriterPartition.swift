import Foundation
import PurchaseLedger

/// Splits a stream among concurrent writers so that each command's outcome is still determined:
/// commands that share a key (a user, a payment, a store transaction, a lineage, a product) go
/// to the same writer, in their input order; writers share no key, so however their commands
/// interleave, each sees the same ledger as the stream's order would have shown it. (A
/// notification's token and order come from its ``GoogleNotice``.)
struct WriterPartition {
    /// For each writer, the indices (into the stream) of its commands, ascending.
    let writers: [[Int]]

    /// - Parameters:
    ///   - commands: the stream.
    ///   - writerCount: how many writers; the parts are dealt out largest first, each to the
    ///     writer with the fewest commands so far.
    init(_ items: [StreamItem], writers writerCount: Int) {
        var parent: [String: String] = [:]
        func root(_ key: String) -> String {
            var key = key
            while let up = parent[key], up != key { key = up }
            return key
        }
        func union(_ keys: [String]) {
            guard let first = keys.first else { return }
            for key in keys where parent[key] == nil { parent[key] = key }
            let head = root(first)
            for key in keys.dropFirst() { let r = root(key); if r != head { parent[r] = head } }
        }
        let keys = items.map { Self.keys($0.command) + ($0.google?.partitionKeys ?? []) }
        for commandKeys in keys { union(commandKeys) }
        var parts: [String: [Int]] = [:]
        for (index, commandKeys) in keys.enumerated() {
            parts[root(commandKeys.first ?? "none"), default: []].append(index)
        }
        var writers = Array(repeating: [Int](), count: max(1, writerCount))
        for part in parts.values.sorted(by: { ($0.count, $0.first ?? 0) > ($1.count, $1.first ?? 0) }) {
            let lightest = writers.indices.min { writers[$0].count < writers[$1].count } ?? 0
            writers[lightest] += part
        }
        self.writers = writers.map { $0.sorted() }
    }

    /// Every key whose state a command reads or writes.
    static func keys(_ command: LedgerCommand) -> [String] {
        switch command {
        case .record(let payment, _):
            return paymentKeys(payment)
        case .consume(let seq, let user, _, _):
            return ["user:\(user)", "payment:\(seq)"]
        case .refund(let seq, _, _):
            return ["payment:\(seq)"]
        case .cancel(let store, let original, _):
            return ["lineage:\(store.rawValue):\(original)"]
        case .restore(let user, let store, _, let purchases):
            return ["user:\(user)", "restore:\(store.rawValue):\(user)"] + purchases.flatMap(paymentKeys)
        case .product(let store, let productId, _, _, _):
            return ["product:\(store.rawValue):\(productId)"]
        case .accountLink(let user, let store, let token):
            return ["user:\(user)", "appAccountToken:\(store.rawValue):\(token)"]
        case .notification(let notification):
            // The rest (the token, the order) come from the stream's GoogleNotice.
            return ["notification:\(notification.storeCode.rawValue):\(notification.notificationId)"]
        }
    }

    private static func paymentKeys(_ payment: Payment) -> [String] {
        var keys = ["user:\(payment.userId)", "payment:\(payment.paymentSeq)",
                    "transaction:\(payment.storeCode.rawValue):\(payment.transactionId)",
                    "product:\(payment.storeCode.rawValue):\(payment.productId)"]
        if let lineage = payment.lineageId { keys.append("lineage:\(payment.storeCode.rawValue):\(lineage)") }
        if payment.storeCode == .googlePlay { keys.append("gtoken:\(payment.purchaseToken)") }
        return keys
    }
}
