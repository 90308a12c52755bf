import Foundation

/// How the ledger asks the stores (docs/contract.md §6.1), read from the environment: the Google
/// service account and API URL, the App Store In-App Purchase key, its ids and URLs, and the
/// consumption answers' settings. A store left unconfigured is nil and never asked.
///
/// The Apple bundle ids are not read here: they are `LEDGER_APPLE_BUNDLE_IDS`, which the ledger
/// already reads; it makes one `AppStoreServerClient` per bundle id with `apple.client(bundleId:http:)`.
public struct StoreAPIConfiguration: Sendable {
    /// The Play Developer API's credentials and URL.
    public struct Google: Sendable {
        /// `LEDGER_GOOGLE_SERVICE_ACCOUNT_FILE`, read and checked.
        public var serviceAccount: GoogleServiceAccount
        /// `LEDGER_GOOGLE_API_URL`.
        public var apiURL: String

        public init(serviceAccount: GoogleServiceAccount, apiURL: String = GooglePlayClient.defaultBaseURL) {
            self.serviceAccount = serviceAccount
            self.apiURL = apiURL
        }

        /// The client, on the shared HTTP client.
        public func client(http: StoreHTTPClient) -> GooglePlayClient {
            GooglePlayClient(account: serviceAccount, baseURL: apiURL, http: http)
        }
    }

    /// The App Store Server API's key and URLs.
    public struct Apple: Sendable {
        /// `LEDGER_APPLE_API_KEY_FILE` with `LEDGER_APPLE_API_KEY_ID` and `LEDGER_APPLE_API_ISSUER_ID`.
        public var key: AppStoreAPIKey
        /// `LEDGER_APPLE_API_URL`.
        public var productionURL: String
        /// `LEDGER_APPLE_API_SANDBOX_URL`.
        public var sandboxURL: String

        public init(key: AppStoreAPIKey, productionURL: String = AppStoreServerClient.defaultProductionURL,
                    sandboxURL: String = AppStoreServerClient.defaultSandboxURL) {
            self.key = key
            self.productionURL = productionURL
            self.sandboxURL = sandboxURL
        }

        /// The client for one app, on the shared HTTP client.
        public func client(bundleId: String, http: StoreHTTPClient) -> AppStoreServerClient {
            AppStoreServerClient(key: key, bundleId: bundleId, productionURL: productionURL, sandboxURL: sandboxURL, http: http)
        }
    }

    /// `LEDGER_APPLE_REFUND_PREFERENCE`: how a consumption answer's `refundPreference` is chosen.
    public enum RefundPreferenceSetting: Sendable, Equatable {
        /// `DECLINE` when the item was delivered, `GRANT_FULL` when not.
        case auto
        /// Left out of the answer.
        case none
        /// Always this value.
        case fixed(ConsumptionRequest.RefundPreference)
    }

    /// Nil when `LEDGER_GOOGLE_SERVICE_ACCOUNT_FILE` is unset: Google is never asked.
    public var google: Google?
    /// Nil when the App Store key variables are unset: Apple is never asked.
    public var apple: Apple?
    /// `LEDGER_APPLE_CONSUMPTION_ANSWERS=on`: answer `CONSUMPTION_REQUEST`s.
    public var appleConsumptionAnswers: Bool
    /// `LEDGER_APPLE_REFUND_PREFERENCE` (default `auto`).
    public var appleRefundPreference: RefundPreferenceSetting
    /// `LEDGER_APPLE_SAMPLE_CONTENT_PROVIDED`, sent as `sampleContentProvided`.
    public var appleSampleContentProvided: Bool
    /// `LEDGER_APPLE_REQUIRE_SIGNED_TRANSACTIONS=on`: an `AS` purchase or renewal line must carry
    /// `signedTransaction`.
    public var appleRequireSignedTransactions: Bool

    public init(google: Google? = nil, apple: Apple? = nil, appleConsumptionAnswers: Bool = false,
                appleRefundPreference: RefundPreferenceSetting = .auto, appleSampleContentProvided: Bool = false,
                appleRequireSignedTransactions: Bool = false) {
        self.google = google
        self.apple = apple
        self.appleConsumptionAnswers = appleConsumptionAnswers
        self.appleRefundPreference = appleRefundPreference
        self.appleSampleContentProvided = appleSampleContentProvided
        self.appleRequireSignedTransactions = appleRequireSignedTransactions
    }

    /// A variable that is wrong, and why. The message names the variable and never quotes key material.
    public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The variable, e.g. `LEDGER_APPLE_API_KEY_FILE`.
        public var variable: String
        /// Why it is refused (a path at most, never a key).
        public var message: String

        public var description: String { "\(variable): \(message)" }
    }

    /// Reads the §6.1 variables from `environment`. An empty value counts as unset. Throws a
    /// `ConfigurationError` naming the variable for a file that cannot be read or parsed, a key
    /// of the wrong kind, an Apple key without its ids (or ids without a key), a URL that is not
    /// http(s), or a value outside its list.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(ConfigurationError) -> StoreAPIConfiguration {
        func value(_ name: String) -> String? {
            guard let text = environment[name]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
            return text
        }
        func url(_ name: String, default fallback: String) throws(ConfigurationError) -> String {
            guard let text = value(name) else { return fallback }
            guard let parsed = URL(string: text), let scheme = parsed.scheme?.lowercased(),
                  scheme == "https" || scheme == "http", let host = parsed.host, !host.isEmpty,
                  parsed.query == nil, parsed.fragment == nil else {
                throw ConfigurationError(variable: name, message: "not an http(s) URL")
            }
            return text
        }
        func flag(_ name: String, on: String, off: String) throws(ConfigurationError) -> Bool {
            guard let text = value(name) else { return false }
            switch text.lowercased() {
            case on: return true
            case off: return false
            default: throw ConfigurationError(variable: name, message: "expected \(on) or \(off), got \"\(text.prefix(40))\"")
            }
        }
        func read(_ name: String, _ path: String) throws(ConfigurationError) -> Data {
            do {
                return try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw ConfigurationError(variable: name, message: "cannot read \(path)")
            }
        }

        var configuration = StoreAPIConfiguration()

        let googleAPI = try url("LEDGER_GOOGLE_API_URL", default: GooglePlayClient.defaultBaseURL)
        if let path = value("LEDGER_GOOGLE_SERVICE_ACCOUNT_FILE") {
            let data = try read("LEDGER_GOOGLE_SERVICE_ACCOUNT_FILE", path)
            do {
                configuration.google = Google(serviceAccount: try GoogleServiceAccount(json: data), apiURL: googleAPI)
            } catch {
                throw ConfigurationError(variable: "LEDGER_GOOGLE_SERVICE_ACCOUNT_FILE", message: "\(path): \(error)")
            }
        }

        let appleProduction = try url("LEDGER_APPLE_API_URL", default: AppStoreServerClient.defaultProductionURL)
        let appleSandbox = try url("LEDGER_APPLE_API_SANDBOX_URL", default: AppStoreServerClient.defaultSandboxURL)
        let trio = ["LEDGER_APPLE_API_KEY_FILE", "LEDGER_APPLE_API_KEY_ID", "LEDGER_APPLE_API_ISSUER_ID"]
        let given = trio.filter { value($0) != nil }
        if !given.isEmpty {
            if let missing = trio.first(where: { value($0) == nil }) {
                throw ConfigurationError(variable: missing,
                                         message: "required with \(given.joined(separator: " and ")) (an App Store key needs its file, key id and issuer id)")
            }
            let path = value("LEDGER_APPLE_API_KEY_FILE")!
            let data = try read("LEDGER_APPLE_API_KEY_FILE", path)
            guard let pem = String(data: data, encoding: .utf8) else {
                throw ConfigurationError(variable: "LEDGER_APPLE_API_KEY_FILE", message: "\(path): not a PEM text file")
            }
            do {
                let key = try AppStoreAPIKey(pem: pem, keyId: value("LEDGER_APPLE_API_KEY_ID")!,
                                             issuerId: value("LEDGER_APPLE_API_ISSUER_ID")!)
                configuration.apple = Apple(key: key, productionURL: appleProduction, sandboxURL: appleSandbox)
            } catch {
                throw ConfigurationError(variable: "LEDGER_APPLE_API_KEY_FILE", message: "\(path): \(error)")
            }
        }

        configuration.appleConsumptionAnswers = try flag("LEDGER_APPLE_CONSUMPTION_ANSWERS", on: "on", off: "off")
        configuration.appleSampleContentProvided = try flag("LEDGER_APPLE_SAMPLE_CONTENT_PROVIDED", on: "true", off: "false")
        configuration.appleRequireSignedTransactions = try flag("LEDGER_APPLE_REQUIRE_SIGNED_TRANSACTIONS", on: "on", off: "off")
        if let text = value("LEDGER_APPLE_REFUND_PREFERENCE") {
            switch text {
            case "auto": configuration.appleRefundPreference = .auto
            case "none": configuration.appleRefundPreference = .none
            default:
                guard let fixed = ConsumptionRequest.RefundPreference(rawValue: text) else {
                    throw ConfigurationError(variable: "LEDGER_APPLE_REFUND_PREFERENCE",
                                             message: "expected auto, none, DECLINE, GRANT_FULL or GRANT_PRORATED, got \"\(text.prefix(40))\"")
                }
                configuration.appleRefundPreference = .fixed(fixed)
            }
        }
        return configuration
    }
}
