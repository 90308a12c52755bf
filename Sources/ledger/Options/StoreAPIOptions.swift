import ArgumentParser
import Foundation
import PurchaseLedger
import StoreAPIs

/// What a command that asks the stores needs (docs/contract.md §6.1): the accepted apps (flags,
/// else the environment), the API credentials from the environment, a ledger and an HTTP client,
/// closed and shut down after the body.
struct StoreAPIOptions: ParsableArguments {
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var stores: StoreOptions

    /// The §6.1 variables; a file that cannot be read, a key of the wrong kind or a bad value is
    /// a usage error naming the variable.
    func apiConfiguration() throws -> StoreAPIConfiguration {
        do {
            return try StoreAPIConfiguration.fromEnvironment(ProcessInfo.processInfo.environment)
        } catch {
            throw ValidationError("\(error)")
        }
    }

    func withStores<T>(_ body: (Ledger, StoreAPIConfiguration, StoreHTTPClient) async throws -> T) async throws -> T {
        let api = try apiConfiguration()
        let ledger = Ledger(databaseURL: database.databaseURL, poolSize: 4, stores: try stores.configuration(),
                            logger: LedgerLog.logger)
        let http = StoreHTTPClient(logger: LedgerLog.logger)
        do {
            let value = try await body(ledger, api, http)
            await ledger.close()
            try? await http.shutdown()
            return value
        } catch {
            await ledger.close()
            try? await http.shutdown()
            throw error
        }
    }
}
