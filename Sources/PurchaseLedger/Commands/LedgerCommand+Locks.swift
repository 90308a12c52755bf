import Crypto
import LedgerJSON

extension LedgerCommand {
    /// The keys whose advisory locks the command's SQL function takes (and the stream it appends
    /// to, where no function locks it), in the form `ledger.lock_keys` orders them
    /// (Schema/definitions/commands/lock_keys.sql). A batch takes the keys of all its commands
    /// first, in that one global order, so that two batches never wait for each other in a cycle:
    /// concurrent ingests cannot deadlock on them. `LockKeyTests` checks, command by command,
    /// that the SQL functions take no key missing here.
    package var lockKeys: [String] {
        switch self {
        case .record(let payment, _):
            return payment.lockKeys
        case .consume(let seq, _, _, _), .refund(let seq, _, _):
            return ["payment:\(seq)"]
        case .cancel(let store, let original, _):
            return ["lineage:\(store.rawValue):\(original)"]
        case .restore(let user, let store, _, let purchases):
            return ["restore:\(store.rawValue):\(user)"] + purchases.flatMap(\.lockKeys)
        case .notification(let notification):
            return notification.lockKeys
        case .product(let store, let product, _, _, _):
            return ["product:\(store.rawValue):\(product)"]
        case .accountLink(_, let store, let token):
            return ["account:\(store.rawValue):\(token)"]
        }
    }
}

extension Payment {
    /// `ledger.payment_lock_keys` of the payment's data.
    var lockKeys: [String] {
        Self.lockKeys(paymentSeq: paymentSeq, storeCode: storeCode.rawValue, transactionId: transactionId,
                      lineage: lineageId,
                      tokenSha256: SHA256.lowercaseHex(of: Array(purchaseToken.utf8)))
    }

    /// `ledger.payment_lock_keys`: the payment, its store transaction, its lineage (the
    /// transaction itself for a consumable) and, on Google Play, its token.
    static func lockKeys(paymentSeq: String?, storeCode: String?, transactionId: String?, lineage: String?,
                         tokenSha256: String?) -> [String] {
        var keys: [String] = []
        if let paymentSeq { keys.append("payment:\(paymentSeq)") }
        guard let storeCode, let transactionId else { return keys }
        keys += ["transaction:\(storeCode):\(transactionId)", "lineage:\(storeCode):\(lineage ?? transactionId)"]
        if storeCode == StoreCode.googlePlay.rawValue, let tokenSha256 { keys.append("token:\(tokenSha256.lowercased())") }
        return keys
    }

    /// ``lockKeys(paymentSeq:storeCode:transactionId:lineage:tokenSha256:)`` of a payment's event
    /// data (a store notification's payment).
    static func lockKeys(eventData: String) -> [String] {
        guard case .object(let d)? = try? JSONParser.parse(eventData) else { return [] }
        let transaction = d["transactionId"]?.stringValue
        let subscription = d["productType"]?.stringValue.map { $0 != ProductType.consumable.rawValue } ?? false
        return lockKeys(paymentSeq: d["paymentSeq"]?.stringValue, storeCode: d["storeCode"]?.stringValue,
                        transactionId: transaction,
                        lineage: subscription ? (d["originalTransactionId"]?.stringValue ?? transaction) : transaction,
                        tokenSha256: d["purchaseTokenSha256"]?.stringValue)
    }
}

extension StoreNotification {
    /// The keys `ledger.notify` locks for the notification.
    var lockKeys: [String] {
        var keys = ["notification:\(storeCode.rawValue):\(notificationId)"]
        guard effect != .ignored, effect != .ask else { return keys }
        switch storeCode {
        case .appStore:
            if let appAccountToken { keys.append("account:AS:\(appAccountToken)") }
            if let transactionId { keys += ["payment:\(transactionId)", "transaction:AS:\(transactionId)"] }
            if let lineage = originalTransactionId ?? transactionId { keys.append("lineage:AS:\(lineage)") }
        case .googlePlay where effect == .learnedPayment:
            // What `ledger.notify` locks for a payment the Play Developer API described (the
            // lineage it reads from the token's payments; a new one's name as a stand-in here).
            if let appAccountToken { keys.append("account:GG:\(appAccountToken)") }
            if case .object(let d)? = payment.flatMap({ try? JSONParser.parse($0) }), let transaction = d["transactionId"]?.stringValue {
                keys += ["payment:\(transaction)", "transaction:GG:\(transaction)"]
            }
            if let originalTransactionId { keys.append("lineage:GG:\(originalTransactionId)") }
            if let purchaseTokenSha256 { keys.append("token:\(purchaseTokenSha256)") }
        case .googlePlay:
            if effect != .payment, let purchaseTokenSha256 { keys.append("token:\(purchaseTokenSha256)") }
            // The payment it records, with the keys `apply_payments` takes for it.
            if effect == .payment, let payment { keys += Payment.lockKeys(eventData: payment) }
        }
        return keys
    }
}
