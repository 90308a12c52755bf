import Crypto
import Foundation
import Postgres
import LedgerJSON

extension LedgerCommand {
    /// The command in the typed form the database takes, `ledger.command`
    /// (Schema/migrations/0007_command_type.sql): its kind and the fields that kind reads, in the
    /// type's column order; `now` stands in for an absent time.
    func composite(now: Date) throws -> PostgresComposite {
        var c = Fields()
        switch self {
        case .record(let payment, let kind):
            c.kind = kind.rawValue
            c.data = JSONB(text: payment.commandFields())
            c.job = payment.storeCheck.map { job in
                var writer = JSONWriter()
                job.write(into: &writer)
                return JSONB(text: writer.string)
            }
        case .consume(let seq, let user, let token, let time):
            c.kind = "consume"
            (c.paymentSeq, c.userId, c.at) = (seq, user, time ?? now)
            c.tokenSha256 = token.map { Array(SHA256.hash(data: Array($0.utf8))) }
        case .refund(let seq, let time, let reason):
            c.kind = "refund"
            (c.paymentSeq, c.at, c.reason) = (seq, time ?? now, reason)
        case .cancel(let store, let original, let time):
            c.kind = "cancel"
            (c.storeCode, c.originalTransactionId, c.at) = (store.rawValue, original, time ?? now)
        case .notification(let notification):
            c.kind = "notification"
            c.data = JSONB(text: notification.eventData())
        case .product(let store, let product, let type, let price, let currency):
            c.kind = "product"
            (c.storeCode, c.productId, c.productType, c.currency) = (store.rawValue, product, type.rawValue, currency)
            c.price = price.map { PostgresValue.text($0.description) }
        case .accountLink(let user, let store, let token):
            c.kind = "accountLink"
            (c.userId, c.storeCode, c.appAccountToken) = (user, store.rawValue, token)
        case .restore(let user, let store, let time, let purchases):
            c.kind = "restore"
            (c.userId, c.storeCode, c.at) = (user, store.rawValue, time ?? now)
            c.data = JSONB(text: Payment.items(purchases.map { ($0, $0.isRenewal ? PaymentKind.renewal : .purchase) }))
        }
        return try PostgresComposite([c.kind, c.data, c.job, c.paymentSeq, c.userId, c.storeCode, c.tokenSha256, c.at,
                                      c.reason, c.originalTransactionId, c.productId, c.productType, c.price, c.currency,
                                      c.appAccountToken])
    }

    /// The columns of `ledger.command`.
    private struct Fields {
        var kind = ""
        var data: JSONB?
        var job: JSONB?
        var paymentSeq: String?
        var userId: String?
        var storeCode: String?
        var tokenSha256: [UInt8]?
        var at: Date?
        var reason: String?
        var originalTransactionId: String?
        var productId: String?
        var productType: String?
        var price: PostgresValue?
        var currency: String?
        var appAccountToken: String?
    }

    /// The columns of a `ledger.command_result` that ``outcome(from:)`` reads.
    static let resultColumns = "status, code, message, payment_seq, consumed_at, to_json(recorded)::text AS recorded, to_json(payments)::text AS payments"

    /// Reads the row that `ledger.execute_commands` returns for the command.
    func outcome(from row: Row) throws -> CommandOutcome {
        let status = try row.decode("status", as: String.self)
        if status == "rejected" {
            let code = try row.decode("code", as: String.self)
            let message = try row.decode("message", as: String.self)
            let seq = try row.decode("payment_seq", as: String?.self)
            var outcome = CommandOutcome(rejected: LedgerError(LedgerError.Code(rawValue: code) ?? .invalidInput, message,
                                                               paymentSeq: seq ?? paymentSeq))
            outcome.notificationId = notificationId
            return outcome
        }
        guard let known = CommandOutcome.Status(rawValue: status) else {
            throw PostgresError(kind: .decoding, message: "the database answered an unknown status \(status)")
        }
        var outcome = CommandOutcome(status: known, paymentSeq: try row.decode("payment_seq", as: String?.self))
        outcome.notificationId = notificationId
        outcome.consumedAt = try row.decode("consumed_at", as: Date?.self)
        if case .cancel(_, let original, _) = self { outcome.originalTransactionId = original }
        if known == .restored {
            outcome.recorded = try Self.strings(row.decode("recorded", as: String?.self))
            outcome.payments = try Self.strings(row.decode("payments", as: String?.self))
        }
        return outcome
    }

    private static func strings(_ json: String?) throws -> [String] {
        guard let json, case .array(let items) = try JSONParser.parse(json) else { return [] }
        return items.compactMap(\.stringValue)
    }
}

extension Payment {
    /// The payment as the command the database takes (`ledger.command`'s data, a restore's
    /// items): every field under its contract name, the token only as its SHA-256 digest, times
    /// in UTC with microseconds, and a payload that jsonb cannot hold (it contains U+0000) as
    /// `payloadBase64`. The event's data is not written here: `ledger.payment_event` builds it
    /// from these fields once the database checked them (for these fields, the same data).
    public func commandFields() -> String {
        var writer = JSONWriter()
        writeCommandFields(into: &writer)
        return writer.string
    }

    /// Payments as the items `ledger.apply_payments` takes (a restore's, a batch's):
    /// `[{"kind": "purchase" | "renewal", "data": {the command's fields}, "job": {…}}, ...]`, the
    /// job (``Payment/storeCheck``, with its token) only when the payment has one.
    static func items(_ payments: [(Payment, PaymentKind)]) -> String {
        var writer = JSONWriter()
        writer.beginArray()
        for (payment, kind) in payments {
            writer.beginObject()
            writer.field("kind", kind.rawValue)
            writer.key("data")
            payment.writeCommandFields(into: &writer)
            if let job = payment.storeCheck {
                writer.key("job")
                job.write(into: &writer)
            }
            writer.endObject()
        }
        writer.endArray()
        return writer.string
    }

    func writeCommandFields(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("userId", userId)
        writer.field("storeCode", storeCode.rawValue)
        writer.field("productId", productId)
        writer.field("productType", productType.rawValue)
        writer.field("price", price.text)
        writer.field("currency", currency)
        writer.field("paymentSeq", paymentSeq)
        writer.field("transactionId", transactionId)
        writer.field("originalTransactionId", originalTransactionId)
        writer.field("purchaseTime", Timestamp(purchaseTime).iso8601Microseconds)
        writer.field("expiryTime", expiryTime.map { Timestamp($0).iso8601Microseconds })
        if let payload, payload.unicodeScalars.contains("\u{0}") {
            writer.field("payloadBase64", Data(payload.utf8).base64EncodedString())
        } else {
            writer.field("payload", payload)
        }
        writer.field("sandboxPayment", sandboxPayment)
        writer.field("promotionPayment", promotionPayment)
        writer.key("productSeq")
        if let productSeq { writer.rawNumber(String(productSeq)) } else { writer.null() }
        writer.field("purchaseTokenSha256", SHA256.lowercaseHex(of: Array(purchaseToken.utf8)))
        writer.endObject()
    }
}
