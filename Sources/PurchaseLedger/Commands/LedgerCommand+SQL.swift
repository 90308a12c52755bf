import Crypto
import Foundation
import Postgres
import LedgerJSON

extension LedgerCommand {
    /// The one statement that runs the command in the database (Schema/definitions/commands).
    /// `now` stands in for an absent time.
    func statement(now: Date) -> SQL {
        let columns = Self.resultColumns
        switch self {
        case .record(let payment, let kind) where payment.storeCheck != nil:
            // With its job: as a set of one, whose items carry jobs.
            return "SELECT \(unsafeSQL: columns) FROM ledger.record_payments(\(JSONB(text: Payment.items([(payment, kind)])))::jsonb)"
        case .record(let payment, let kind):
            return "SELECT \(unsafeSQL: columns) FROM ledger.record_payment(\(kind.rawValue), \(JSONB(text: payment.commandFields()))::jsonb)"
        case .consume(let seq, let user, let token, let time):
            let digest = token.map { Array(SHA256.hash(data: Array($0.utf8))) }
            return "SELECT \(unsafeSQL: columns) FROM ledger.consume(\(seq), \(user), \(digest)::bytea, \(time ?? now)::timestamptz)"
        case .refund(let seq, let time, let reason):
            return "SELECT \(unsafeSQL: columns) FROM ledger.refund(\(seq), \(time ?? now)::timestamptz, \(reason)::text)"
        case .cancel(let store, let original, let time):
            return "SELECT \(unsafeSQL: columns) FROM ledger.cancel(\(store.rawValue), \(original), \(time ?? now)::timestamptz)"
        case .notification(let notification):
            return "SELECT \(unsafeSQL: columns) FROM ledger.notify(\(JSONB(text: notification.eventData()))::jsonb)"
        case .product(let store, let product, let type, let price, let currency):
            return "SELECT \(unsafeSQL: columns) FROM ledger.declare_product(\(store.rawValue), \(product), \(type.rawValue), \(price?.description)::numeric, \(currency)::text)"
        case .accountLink(let user, let store, let token):
            return "SELECT \(unsafeSQL: columns) FROM ledger.link_account(\(user), \(store.rawValue), \(token))"
        case .restore(let user, let store, let time, let purchases):
            let items = Payment.items(purchases.map { ($0, $0.isRenewal ? PaymentKind.renewal : .purchase) })
            return "SELECT \(unsafeSQL: columns) FROM ledger.restore(\(user), \(store.rawValue), \(time ?? now)::timestamptz, \(JSONB(text: items))::jsonb)"
        }
    }

    /// The columns of a `ledger.command_result` that ``outcome(from:)`` reads.
    static let resultColumns = "status, code, message, payment_seq, consumed_at, to_json(recorded)::text AS recorded, to_json(payments)::text AS payments"

    /// A purchase or a renewal: in a batch, recorded with the other payments of its round.
    package var isPayment: Bool {
        if case .record = self { true } else { false }
    }

    /// A consume: in a batch, run with the other consumes of its round as one set.
    package var isConsume: Bool {
        if case .consume = self { true } else { false }
    }

    /// Consumes as one statement, `ledger.consume_batch`: the items it takes are each consume's
    /// name, user, token digest (hex) and time (`now` for an absent one), as `ledger.consume`
    /// takes them one by one. Commands other than consumes are left out.
    static func consumeBatchStatement(_ consumes: [LedgerCommand], now: Date) -> SQL {
        var items = JSONWriter()
        items.beginArray()
        for case .consume(let seq, let user, let token, let time) in consumes {
            let at = time ?? now
            guard case .text(let text)? = try? at.postgresValue() else {
                // A time PostgreSQL cannot hold fails the statement when it runs, as the
                // consume's own statement would.
                return "SELECT \(at)::timestamptz"
            }
            items.beginObject()
            items.field("paymentSeq", seq)
            items.field("userId", user)
            items.field("purchaseTokenSha256", token.map { SHA256.lowercaseHex(of: Array($0.utf8)) })
            items.field("time", text)
            items.endObject()
        }
        items.endArray()
        return "SELECT \(unsafeSQL: resultColumns) FROM ledger.consume_batch(\(JSONB(text: items.string))::jsonb)"
    }

    /// A consume or a refund: in a batch, it keeps its order among the others of these kinds
    /// (either may name its payment by an alias, a key no command foresees). A cancel names its
    /// lineage itself and reads only what its lineage key guards (the lineage, its payments, its
    /// auto-renew changes), so it needs no order beyond its key's: it no longer splits the rounds
    /// of the consumes and refunds around it.
    package var keepsOrder: Bool {
        switch self {
        case .consume, .refund: true
        default: false
        }
    }

    /// A command whose outcome reads more than its ``lockKeys`` name (a restore lists the user's
    /// subscription payments; a notification, a product or an account link changes how later
    /// commands read): in a batch, it runs after every earlier command and before every later one.
    package var isBarrier: Bool {
        switch self {
        case .restore, .notification, .product, .accountLink: true
        case .record, .consume, .refund, .cancel: false
        }
    }

    /// Reads the row that `statement(now:)` returns.
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
    /// The payment as the command the database takes (`ledger.record_payment`, a restore's
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
