import LedgerTestSupport
import _CryptoExtras
import Crypto
import Foundation
import StoreAPIs
import Testing

/// `StoreAPIConfiguration.fromEnvironment`: the §6.1 variables, and errors that name the variable.
@Suite struct StoreAPIConfigurationTests {
    /// A temporary folder with a service account file, a .p8 key and a file of each wrong kind.
    final class Files: Sendable {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-config-\(UUID().uuidString)")
        let rsaPEM: String
        let p256PEM = P256.Signing.PrivateKey().pemRepresentation

        init() throws {
            rsaPEM = try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try write("sa.json", Self.serviceAccount(rsaPEM))
            try write("sa-ec.json", Self.serviceAccount(p256PEM))
            try write("sa-broken.json", "{\"type\": \"service_account\", ")
            try write("key.p8", p256PEM)
            try write("rsa.p8", rsaPEM)
        }

        static func serviceAccount(_ pem: String) throws -> String {
            let object: [String: Any] = [
                "type": "service_account", "private_key_id": "0123abcd", "private_key": pem,
                "client_email": "ledger@example.iam.gserviceaccount.com", "token_uri": "https://oauth2.googleapis.com/token",
            ]
            return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        }

        func write(_ name: String, _ text: String) throws {
            try Data(text.utf8).write(to: directory.appendingPathComponent(name))
        }

        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

        deinit { try? FileManager.default.removeItem(at: directory) }
    }

    func error(_ environment: [String: String]) throws -> StoreAPIConfiguration.ConfigurationError {
        try #require(throws: StoreAPIConfiguration.ConfigurationError.self) {
            _ = try StoreAPIConfiguration.fromEnvironment(environment)
        }
    }

    @Test func nothingSetAsksNoStore() throws {
        let configuration = try StoreAPIConfiguration.fromEnvironment([:])
        #expect(configuration.google == nil && configuration.apple == nil)
        #expect(!configuration.appleConsumptionAnswers && !configuration.appleSampleContentProvided)
        #expect(!configuration.appleRequireSignedTransactions && configuration.appleRefundPreference == .auto)
    }

    @Test func everyVariableIsRead() throws {
        let files = try Files()
        let configuration = try StoreAPIConfiguration.fromEnvironment([
            "LEDGER_GOOGLE_SERVICE_ACCOUNT_FILE": files.path("sa.json"), "LEDGER_GOOGLE_API_URL": "http://127.0.0.1:9000",
            "LEDGER_APPLE_API_KEY_FILE": files.path("key.p8"), "LEDGER_APPLE_API_KEY_ID": "ABC123DEFG",
            "LEDGER_APPLE_API_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a",
            "LEDGER_APPLE_API_URL": "http://127.0.0.1:9001", "LEDGER_APPLE_API_SANDBOX_URL": "http://127.0.0.1:9002",
            "LEDGER_APPLE_CONSUMPTION_ANSWERS": "on", "LEDGER_APPLE_REFUND_PREFERENCE": "GRANT_PRORATED",
            "LEDGER_APPLE_SAMPLE_CONTENT_PROVIDED": "true", "LEDGER_APPLE_REQUIRE_SIGNED_TRANSACTIONS": "on",
        ])
        let google = try #require(configuration.google)
        #expect(google.serviceAccount.clientEmail == "ledger@example.iam.gserviceaccount.com")
        #expect(google.serviceAccount.privateKeyId == "0123abcd" && google.apiURL == "http://127.0.0.1:9000")
        let apple = try #require(configuration.apple)
        #expect(apple.key.keyId == "ABC123DEFG" && apple.key.issuerId == "57246542-96fe-1a63-e053-0824d011072a")
        #expect(apple.productionURL == "http://127.0.0.1:9001" && apple.sandboxURL == "http://127.0.0.1:9002")
        #expect(configuration.appleConsumptionAnswers && configuration.appleSampleContentProvided)
        #expect(configuration.appleRequireSignedTransactions)
        #expect(configuration.appleRefundPreference == .fixed(.grantProrated))
        #expect(!"\(google.serviceAccount)\(apple.key)".contains("PRIVATE KEY"))
        let defaults = try StoreAPIConfiguration.fromEnvironment(["LEDGER_GOOGLE_SERVICE_ACCOUNT_FILE": files.path("sa.json"),
                                                                  "LEDGER_APPLE_REFUND_PREFERENCE": "none"])
        #expect(defaults.google?.apiURL == "https://androidpublisher.googleapis.com")
        #expect(defaults.appleRefundPreference == StoreAPIConfiguration.RefundPreferenceSetting.none)
    }

    @Test func aGoogleFileThatCannotBeUsedNamesTheVariable() throws {
        let files = try Files()
        for name in ["missing.json", "sa-broken.json", "sa-ec.json", "key.p8"] {
            let error = try error(["LEDGER_GOOGLE_SERVICE_ACCOUNT_FILE": files.path(name)])
            #expect(error.variable == "LEDGER_GOOGLE_SERVICE_ACCOUNT_FILE")
            #expect("\(error)".hasPrefix("LEDGER_GOOGLE_SERVICE_ACCOUNT_FILE: "))
            #expect(!"\(error)".contains("PRIVATE KEY") && !"\(error)".contains("MII"))
        }
    }

    @Test func anAppleKeyOfTheWrongKindNamesTheVariable() throws {
        let files = try Files()
        for name in ["rsa.p8", "sa.json", "missing.p8"] {
            let error = try error(["LEDGER_APPLE_API_KEY_FILE": files.path(name), "LEDGER_APPLE_API_KEY_ID": "K",
                                   "LEDGER_APPLE_API_ISSUER_ID": "I"])
            #expect(error.variable == "LEDGER_APPLE_API_KEY_FILE")
            #expect(!"\(error)".contains("PRIVATE KEY") && !"\(error)".contains("MII"))
        }
    }

    @Test(arguments: [
        (["LEDGER_APPLE_API_KEY_ID": "K", "LEDGER_APPLE_API_ISSUER_ID": "I"], "LEDGER_APPLE_API_KEY_FILE"),
        (["LEDGER_APPLE_API_KEY_FILE": "/nonexistent.p8"], "LEDGER_APPLE_API_KEY_ID"),
        (["LEDGER_APPLE_API_KEY_FILE": "/nonexistent.p8", "LEDGER_APPLE_API_KEY_ID": "K"], "LEDGER_APPLE_API_ISSUER_ID"),
    ])
    func aHalfSetAppleTrioNamesTheMissingVariable(environment: [String: String], missing: String) throws {
        #expect(try error(environment).variable == missing)
    }

    @Test(arguments: [
        ("LEDGER_APPLE_CONSUMPTION_ANSWERS", "yes"), ("LEDGER_APPLE_REFUND_PREFERENCE", "grant_full"),
        ("LEDGER_APPLE_SAMPLE_CONTENT_PROVIDED", "on"), ("LEDGER_APPLE_REQUIRE_SIGNED_TRANSACTIONS", "1"),
        ("LEDGER_GOOGLE_API_URL", "androidpublisher.googleapis.com"), ("LEDGER_APPLE_API_URL", "ftp://example.com"),
        ("LEDGER_APPLE_API_SANDBOX_URL", "http://"),
    ])
    func aBadValueNamesTheVariable(variable: String, value: String) throws {
        let error = try error([variable: value])
        #expect(error.variable == variable)
        #expect("\(error)".hasPrefix(variable + ": "))
    }
}
