import ArgumentParser
import Foundation
import PurchaseLedger

struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create or upgrade the schema; safe to run again and from several processes at once.")

    @OptionGroup var database: DatabaseOptions

    func run() throws {
        let connection = try database.connect()
        defer { connection.close() }
        let applied = try Migrator().migrate(connection) { print($0) }
        print(applied.isEmpty ? "the schema is up to date" : "done: " + applied.joined(separator: "; "))
        // On a Citus cluster, what its operator should change (standard error: the output above
        // stays what scripts read).
        for advice in try Ledger.clusterAdvice(on: connection) {
            FileHandle.standardError.write(Data("warning: \(advice)\n".utf8))
        }
    }
}
