import Foundation
import PurchaseLedger

extension ServerConfiguration {
    /// The variables `ledger serve` reads (its flags override them), with what each sets.
    public static let variables: [(name: String, meaning: String)] = [
        ("LEDGER_HTTP_HOST", "address to listen on (default 127.0.0.1)"),
        ("LEDGER_HTTP_PORT", "port (default 8080; 0 picks a free one)"),
        ("LEDGER_HTTP_MAX_BODY_BYTES", "largest request body (default 1048576)"),
        ("LEDGER_HTTP_MAX_BATCH_BYTES", "largest body of POST /v1/batch (default 67108864)"),
        ("LEDGER_HTTP_MAX_CONCURRENT", "requests at once before 503 (default 256)"),
        ("LEDGER_HTTP_IDLE_TIMEOUT", "seconds before an idle connection is closed (default 60)"),
        ("LEDGER_HTTP_REQUEST_TIMEOUT", "seconds a request's head and body may take to arrive before 408 (default 30)"),
        ("LEDGER_HTTP_KEY_REFRESH", "seconds a revoked key may still work (default 5)"),
        ("LEDGER_REPORT_TIMEOUT", "seconds one analytics report may run, such as 30 or 2.5; 0 for no limit (default 30)"),
        ("LEDGER_GOOGLE_PUSH_JWKS", "Google's OIDC signing keys: a JWKS file, or the URL to fetch them from"),
        ("LEDGER_GOOGLE_PUSH_AUDIENCE", "the audience of the push subscription's OIDC token"),
        ("LEDGER_GOOGLE_PUSH_EMAIL", "the push subscription's service account (optional)"),
        ("LEDGER_GOOGLE_PUSH_SECRET", "a shared secret Pub/Sub sends as ?token= (instead of OIDC)"),
    ]

    /// The configuration from `environment` (the §5.1 store variables included). Throws
    /// ``ConfigurationError`` naming the variable that is wrong.
    public init(environment: [String: String]) throws {
        self.init()
        func value(_ name: String) -> String? {
            environment[name].flatMap { $0.isEmpty ? nil : $0 }
        }
        func integer(_ name: String, _ range: ClosedRange<Int>) throws -> Int? {
            guard let text = value(name) else { return nil }
            guard let number = Int(text), range.contains(number) else {
                throw ConfigurationError("\(name): expected an integer in \(range.lowerBound)...\(range.upperBound), got '\(text)'")
            }
            return number
        }
        if let host = value("LEDGER_HTTP_HOST") { self.host = host }
        if let port = try integer("LEDGER_HTTP_PORT", 0...65535) { self.port = port }
        if let bytes = try integer("LEDGER_HTTP_MAX_BODY_BYTES", 1024...(1 << 30)) { maxBodyBytes = bytes }
        if let bytes = try integer("LEDGER_HTTP_MAX_BATCH_BYTES", 1024...(1 << 31)) { maxBatchBytes = bytes }
        if let limit = try integer("LEDGER_HTTP_MAX_CONCURRENT", 1...100_000) { maxConcurrentRequests = limit }
        if let seconds = try integer("LEDGER_HTTP_IDLE_TIMEOUT", 1...86_400) { idleTimeout = .seconds(seconds) }
        if let seconds = try integer("LEDGER_HTTP_REQUEST_TIMEOUT", 1...86_400) { requestTimeout = .seconds(seconds) }
        if let seconds = try integer("LEDGER_HTTP_KEY_REFRESH", 0...3600) { keyRefreshInterval = .seconds(seconds) }
        if let text = value("LEDGER_REPORT_TIMEOUT") {
            guard let seconds = Double(text), seconds.isFinite, (0...86_400).contains(seconds) else {
                throw ConfigurationError("LEDGER_REPORT_TIMEOUT: expected seconds from 0 (no limit) to 86400, such as 30 or 2.5, got '\(text)'")
            }
            reportTimeout = seconds == 0 ? nil : .milliseconds(max(1, Int64((seconds * 1000).rounded())))
        }
        do {
            stores = try StoreConfiguration.fromEnvironment(environment)
        } catch {
            throw ConfigurationError("\(error)")
        }
        var google = GooglePushAuthentication(sharedSecret: value("LEDGER_GOOGLE_PUSH_SECRET"))
        switch (value("LEDGER_GOOGLE_PUSH_JWKS"), value("LEDGER_GOOGLE_PUSH_AUDIENCE")) {
        case (nil, nil):
            break
        case (let location?, let audience?):
            do {
                let keys: JWKSSource
                if location.hasPrefix("https://") || location.hasPrefix("http://") {
                    guard let url = URL(string: location) else { throw JWKSError("not a URL: \(location)") }
                    keys = JWKSSource(url: url)
                } else {
                    keys = JWKSSource(try JWKS(contentsOf: location))
                }
                google.oidc = GoogleOIDCVerifier(keys: keys, audience: audience, email: value("LEDGER_GOOGLE_PUSH_EMAIL"))
            } catch {
                throw ConfigurationError("LEDGER_GOOGLE_PUSH_JWKS: \(error)")
            }
        case (nil, _):
            throw ConfigurationError("LEDGER_GOOGLE_PUSH_AUDIENCE is set without LEDGER_GOOGLE_PUSH_JWKS")
        case (_, nil):
            throw ConfigurationError("LEDGER_GOOGLE_PUSH_JWKS is set without LEDGER_GOOGLE_PUSH_AUDIENCE")
        }
        if google.oidc != nil || google.sharedSecret != nil { googlePush = google }
    }
}

/// A configuration value that cannot be used; the message names the variable or flag.
public struct ConfigurationError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
