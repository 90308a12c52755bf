import Foundation
import StoreAPIs

/// Which store notifications the ledger accepts (docs/contract.md §5.1): the apps, the App Store
/// environments and the roots that Apple's signatures must chain to.
public struct StoreConfiguration: Sendable {
    /// Bundle ids whose App Store notifications are accepted; none accepts no Apple notification.
    public var appleBundleIds: Set<String>
    /// Accepted App Store environments (`Production`, `Sandbox`).
    public var appleEnvironments: Set<String>
    /// The only roots Apple's certificate chains may lead to.
    public var appleRoots: AppleRootCertificates
    /// Package names whose Google Play notifications are accepted; none accepts no Google notification.
    public var googlePackageNames: Set<String>
    /// The Play Developer API is configured (docs/contract.md §6.3): a notification that only it
    /// can explain is recorded with a job that asks it, instead of being ignored.
    public var asksGoogle: Bool = false
    /// Apple's CONSUMPTION_REQUEST is answered (`LEDGER_APPLE_CONSUMPTION_ANSWERS=on`, §6.4).
    public var answersConsumptionRequests: Bool = false
    /// An App Store `purchase` or `renewal` line must carry the app's `signedTransaction`
    /// (`LEDGER_APPLE_REQUIRE_SIGNED_TRANSACTIONS=on`, §6.4).
    public var requiresSignedTransactions: Bool = false

    public init(appleBundleIds: Set<String> = [], appleEnvironments: Set<String> = ["Production"],
                appleRoots: AppleRootCertificates = .appleRootCAG3, googlePackageNames: Set<String> = []) {
        self.appleBundleIds = appleBundleIds
        self.appleEnvironments = appleEnvironments
        self.appleRoots = appleRoots
        self.googlePackageNames = googlePackageNames
    }

    /// The defaults of §5.1: nothing accepted until configured.
    public static let none = StoreConfiguration()

    /// Reads `LEDGER_APPLE_BUNDLE_IDS`, `LEDGER_APPLE_ENVIRONMENTS`, `LEDGER_APPLE_ROOT_CERTIFICATES`
    /// and `LEDGER_GOOGLE_PACKAGE_NAMES`, and from the store APIs' variables (§6.1) whether Google
    /// is asked, consumption requests answered and signed transactions required. Throws
    /// `INVALID_INPUT` naming the variable that is wrong.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> StoreConfiguration {
        let environments = list(environment["LEDGER_APPLE_ENVIRONMENTS"])
        for name in environments where name != "Production" && name != "Sandbox" {
            throw LedgerError(.invalidInput, "LEDGER_APPLE_ENVIRONMENTS: unknown environment \"\(name)\" (expected Production or Sandbox)")
        }
        var stores = StoreConfiguration(
            appleBundleIds: Set(list(environment["LEDGER_APPLE_BUNDLE_IDS"])),
            appleEnvironments: environments.isEmpty ? ["Production"] : Set(environments),
            appleRoots: try AppleRootCertificates.fromEnvironment(environment["LEDGER_APPLE_ROOT_CERTIFICATES"]),
            googlePackageNames: Set(list(environment["LEDGER_GOOGLE_PACKAGE_NAMES"])))
        // What the store APIs' configuration (§6.1, read once, in StoreAPIs) decides about notifications.
        let api: StoreAPIConfiguration
        do {
            api = try StoreAPIConfiguration.fromEnvironment(environment)
        } catch {
            throw LedgerError(.invalidInput, error.description)
        }
        if api.appleConsumptionAnswers, api.apple == nil {
            throw LedgerError(.invalidInput, "LEDGER_APPLE_CONSUMPTION_ANSWERS: on needs the App Store Server API's key (LEDGER_APPLE_API_KEY_FILE, LEDGER_APPLE_API_KEY_ID, LEDGER_APPLE_API_ISSUER_ID)")
        }
        stores.asksGoogle = api.google != nil
        stores.answersConsumptionRequests = api.appleConsumptionAnswers
        stores.requiresSignedTransactions = api.appleRequireSignedTransactions
        return stores
    }

    /// A comma-separated list, blanks trimmed, empty entries dropped.
    static func list(_ value: String?) -> [String] {
        (value ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
