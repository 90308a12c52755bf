import LedgerTestSupport
import Foundation
import StoreAPIs
import Testing

/// Prices, timestamps, `Retry-After` and the error's text: pure functions, no store.
@Suite struct ValueTests {
    @Test(arguments: [
        ("4", 990_000_000, "4.99"), ("5", 0, "5"), ("0", 990_000_000, "0.99"), ("0", 0, "0"),
        ("-1", -750_000_000, "-1.75"), ("0", -500_000_000, "-0.5"), ("12", 1, "12.000000001"),
        ("007", 100_000_000, "7.1"), ("123456789012345678901", 5, "123456789012345678901.000000005"),
        ("1", 999_999_999, "1.999999999"),
    ])
    func moneyIsAnExactDecimal(units: String, nanos: Int, decimal: String) {
        #expect(Money.decimalString(units: units, nanos: nanos) == decimal)
    }

    @Test(arguments: [("1", -5), ("-1", 5), ("x", 0), ("", 0), ("1", 1_000_000_000), ("1.5", 0)])
    func moneyRefusesWhatGoogleDoesNotWrite(units: String, nanos: Int) {
        #expect(Money.decimalString(units: units, nanos: nanos) == nil)
    }

    @Test(arguments: [
        ("2026-04-01T00:00:00Z", 1_775_001_600.0), ("2026-04-01T00:00:00.5Z", 1_775_001_600.5),
        ("2026-04-01T00:00:00.123456789Z", 1_775_001_600.123456789), ("2026-04-01T02:00:00+02:00", 1_775_001_600.0),
        ("2026-03-31T19:30:00-04:30", 1_775_001_600.0), ("1970-01-01T00:00:00Z", 0), ("2024-02-29T12:00:00z", 1_709_208_000),
    ])
    func timestampsAreRFC3339(text: String, seconds: Double) throws {
        let date = try #require(StoreTimestamp.date(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.000_001)
    }

    @Test(arguments: ["2026-04-01", "2026-04-01T00:00:00", "2026-13-01T00:00:00Z", "2026-04-01T00:00:00.Z", "1775001600", ""])
    func notTimestamps(text: String) {
        #expect(StoreTimestamp.date(text) == nil)
    }

    @Test func retryAfterReadsSecondsHTTPDatesAndApplesMilliseconds() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(RetryAfter.delay("120", now: now) == 120)
        #expect(RetryAfter.delay(" 0 ", now: now) == 0)
        #expect(RetryAfter.delay("1800000030000", now: now) == 30)
        #expect(RetryAfter.delay("1799999990000", now: now) == 0)
        // 1800000000 is Fri, 15 Jan 2027 08:00:00 GMT.
        #expect(RetryAfter.delay("Fri, 15 Jan 2027 08:00:45 GMT", now: now) == 45)
        #expect(RetryAfter.delay("Friday, 15-Jan-27 08:01:00 GMT", now: now) == 60)
        #expect(RetryAfter.delay("Fri Jan 15 08:00:10 2027", now: now) == 10)
        #expect(RetryAfter.delay("Thu, 01 Jan 2026 00:00:00 GMT", now: now) == 0)
        #expect(RetryAfter.delay("soon", now: now) == nil)
        #expect(RetryAfter.delay("", now: now) == nil)
    }

    @Test func retryableIsTransientOnly() {
        func error(_ kind: StoreAPIError.Kind) -> StoreAPIError { StoreAPIError(store: .googlePlay, route: "r", kind: kind) }
        for status in [408, 429, 500, 502, 503, 504] { #expect(error(.status(status)).isRetryable) }
        for status in [400, 401, 403, 404, 409, 410] { #expect(!error(.status(status)).isRetryable) }
        #expect(error(.timeout).isRetryable && error(.connection).isRetryable)
        #expect(!error(.malformedAnswer).isRetryable && !error(.invalidRequest).isRetryable)
    }

    @Test func theDescriptionNamesTheRouteAndTheStoresAnswer() {
        let error = StoreAPIError(store: .appStore, route: "consumption.send", kind: .status(429), storeCode: "4290000",
                                  storeMessage: "Rate limit exceeded.", retryAfter: 29.2)
        #expect("\(error)" == "app-store consumption.send: HTTP 429 4290000: Rate limit exceeded.; retry after 30 s")
        #expect(error.appleErrorCode == 4_290_000)
    }

    @Test func aServiceAccountAssertionIsRS256ForTheTokenEndpoint() throws {
        let account = GoogleServiceAccount(clientEmail: "a@p.iam.gserviceaccount.com", privateKeyId: "kid-1",
                                           tokenURI: "http://127.0.0.1:1/token",
                                           privateKey: try .init(keySize: .bits2048))
        let jwt = try account.assertion(now: Date(timeIntervalSince1970: 1_800_000_000))
        let parts = jwt.split(separator: ".")
        let header = try JSONSerialization.jsonObject(with: try #require(Base64URL.decode(parts[0]))) as? [String: Any]
        let claims = try JSONSerialization.jsonObject(with: try #require(Base64URL.decode(parts[1]))) as? [String: Any]
        #expect(header?["alg"] as? String == "RS256" && header?["kid"] as? String == "kid-1")
        #expect(claims?["iss"] as? String == "a@p.iam.gserviceaccount.com")
        #expect(claims?["scope"] as? String == "https://www.googleapis.com/auth/androidpublisher")
        #expect(claims?["aud"] as? String == "https://oauth2.googleapis.com/token")
        #expect(claims?["iat"] as? Int == 1_800_000_000 && claims?["exp"] as? Int == 1_800_003_600)
        #expect(!"\(account)".contains("PRIVATE"))
    }
}
