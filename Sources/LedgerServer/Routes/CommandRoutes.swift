import LedgerJSON
import Hummingbird
import PurchaseLedger

/// `POST /v1/<resource>`: one contract command per request, for backends (role `writer`). The
/// body is the command's JSON line without `type` (docs/contract.md §2, §5.4; the SDKs' field names
/// decode too), decoded by the same decoder as `ledger ingest`, so each field has one rule.
struct CommandRoutes {
    let ledger: Ledger
    let metrics: ServerMetrics
    let maxBodyBytes: Int

    /// The routes and the command `type` each one takes.
    static let resources: [(path: String, type: String)] = [
        ("purchases", "purchase"), ("renewals", "renewal"), ("consumes", "consume"), ("restores", "restore"),
        ("refunds", "refund"), ("cancels", "cancel"), ("products", "product"), ("account-links", "accountLink"),
    ]

    func add(to group: RouterGroup<LedgerRequestContext>) {
        for (path, type) in Self.resources {
            group.post(RouterPath(path)) { request, _ in
                var request = request
                let body = try await request.bytes(upTo: maxBodyBytes)
                let command = try Self.command(type: type, body: body, stores: ledger.stores)
                let outcome = try await APIError.mappingDatabase { try await ledger.execute(command) }
                metrics.outcome(outcome)
                return try outcome.response
            }
        }
    }

    /// Decodes the body as the route's command; a `type` in the body must be the route's.
    static func command(type: String, body: [UInt8], stores: StoreConfiguration) throws -> LedgerCommand {
        var object = try JSONBody.object(body)
        if let given = object["type"], given.stringValue != type {
            throw APIError.invalid("type", "this route takes \(type) commands; leave type out")
        }
        object["type"] = .string(type)
        do {
            return try LedgerCommand(json: .object(object), stores: stores)
        } catch {
            throw APIError(error)
        }
    }
}

/// Parses a request body as one JSON object, with the ledger's own parser and depth limit.
enum JSONBody {
    static func object(_ body: [UInt8]) throws -> JSONObject {
        let value: JSONValue
        do {
            value = try JSONParser.parse(body)
        } catch {
            throw APIError(.badRequest, LedgerError.Code.invalidInput.rawValue, "malformed JSON: \(error)")
        }
        guard let object = value.objectValue else {
            throw APIError(.badRequest, LedgerError.Code.invalidInput.rawValue, "expected a JSON object, got \(value.typeName)")
        }
        return object
    }
}
