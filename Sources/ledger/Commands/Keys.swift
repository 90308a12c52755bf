import LedgerJSON
import ArgumentParser
import Foundation
import LedgerServer
import PurchaseLedger

extension APIKeyRole: ExpressibleByArgument {}

/// `ledger keys add|list|revoke`: the API keys of `ledger serve`. Run as the role that ran
/// `ledger migrate`.
struct Keys: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make, list and revoke the API keys of ledger serve (only their SHA-256 is stored).",
        subcommands: [Add.self, List.self, Revoke.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a key and print it once on standard output; the ledger keeps only its SHA-256.")

        @Option(help: "writer (commands and queries), reader (queries and reports) or notifications (store webhooks).")
        var role: APIKeyRole

        @OptionGroup var database: DatabaseOptions

        func run() throws {
            let connection = try database.connect()
            defer { connection.close() }
            let (id, key) = try connection.addAPIKey(role: role)
            print(key)
            FileHandle.standardError.write(Data("key \(id) (\(role.rawValue)) made; it is shown only this once\n".utf8))
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the keys: id, role, made, revoked (never the keys).")

        @OptionGroup var output: OutputOptions
        @OptionGroup var database: DatabaseOptions

        func run() throws {
            let connection = try database.connect()
            defer { connection.close() }
            let keys = try connection.apiKeys()
            if output.json {
                var w = JSONWriter()
                w.beginArray()
                for key in keys {
                    w.beginObject()
                    w.field("id", Int(key.id))
                    w.field("role", key.role.rawValue)
                    w.field("createdAt", key.createdAt.ledgerText)
                    w.field("revokedAt", key.revokedAt?.ledgerText)
                    w.endObject()
                }
                w.endArray()
                print(w.string)
            } else {
                print(Table(["id", "role", "created (UTC)", "revoked (UTC)"], keys.map {
                    [String($0.id), $0.role.rawValue, $0.createdAt.ledgerText, $0.revokedAt?.ledgerText ?? "-"]
                }).render(empty: "no API keys"))
            }
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a key by id; a running server stops taking it within its key refresh interval.",
            discussion: "Exit status 1 when there is no such key or it was already revoked.")

        @Argument(help: "The key's id, as ledger keys list shows it.")
        var id: Int64

        @OptionGroup var database: DatabaseOptions

        func run() throws {
            let connection = try database.connect()
            defer { connection.close() }
            guard try connection.revokeAPIKey(id: id) else {
                FileHandle.standardError.write(Data("ledger: no live key \(id)\n".utf8))
                throw ExitCode(1)
            }
            print("revoked key \(id)")
        }
    }
}
