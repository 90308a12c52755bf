import ArgumentParser
import Foundation
import PurchaseLedger

/// Which store notifications are accepted (docs/contract.md §5.1): flags, else the environment.
struct StoreOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Comma-separated bundle ids whose App Store notifications are accepted.",
                               discussion: "Default: LEDGER_APPLE_BUNDLE_IDS, else none."))
    var appleBundleIds: String?

    @Option(help: "Accepted App Store environments, of Production and Sandbox (default: LEDGER_APPLE_ENVIRONMENTS, else Production).")
    var appleEnvironments: String?

    @Option(help: "':'-separated PEM files of the only trusted Apple roots (default: LEDGER_APPLE_ROOT_CERTIFICATES, else the built-in Apple Root CA - G3).")
    var appleRootCertificates: String?

    @Option(help: "Comma-separated package names whose Google Play notifications are accepted (default: LEDGER_GOOGLE_PACKAGE_NAMES, else none).")
    var googlePackageNames: String?

    /// The configuration: each flag given overrides its environment variable.
    func configuration() throws -> StoreConfiguration {
        var environment = ProcessInfo.processInfo.environment
        let flags: [(String, String?)] = [
            ("LEDGER_APPLE_BUNDLE_IDS", appleBundleIds), ("LEDGER_APPLE_ENVIRONMENTS", appleEnvironments),
            ("LEDGER_APPLE_ROOT_CERTIFICATES", appleRootCertificates), ("LEDGER_GOOGLE_PACKAGE_NAMES", googlePackageNames),
        ]
        for (name, value) in flags where value != nil { environment[name] = value }
        do {
            return try StoreConfiguration.fromEnvironment(environment)
        } catch {
            throw ValidationError("\(error)")
        }
    }
}
