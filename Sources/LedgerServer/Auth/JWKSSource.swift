import _CryptoExtras
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Where the keys of Google's OIDC tokens come from: a JWKS given once (a file the operator
/// refreshes), or Google's published URL (`https://www.googleapis.com/oauth2/v3/certs`), fetched
/// when first needed, again after `refreshInterval`, and again (at most once per
/// `minimumRefetchInterval`) when a token names a key id the set does not hold: Google rotates
/// its keys every few days and publishes a new one before signing with it.
public final class JWKSSource: Sendable {
    private enum Origin: Sendable {
        case fixed
        case url(URL)
    }

    private struct State: Sendable {
        var keys: JWKS?
        var fetchedAt: ContinuousClock.Instant?
        var attemptedAt: ContinuousClock.Instant?
    }

    private let origin: Origin
    private let state: Mutex<State>
    /// How long fetched keys are used before they are fetched again.
    public let refreshInterval: Duration
    /// The least time between two fetches, however many unknown key ids are shown.
    public let minimumRefetchInterval: Duration

    /// A fixed key set.
    public init(_ keys: JWKS) {
        origin = .fixed
        state = Mutex(State(keys: keys))
        refreshInterval = .seconds(0)
        minimumRefetchInterval = .seconds(0)
    }

    /// Keys fetched from `url` (HTTPS, or HTTP on loopback for tests).
    public init(url: URL, refreshInterval: Duration = .seconds(3600), minimumRefetchInterval: Duration = .seconds(30)) {
        origin = .url(url)
        state = Mutex(State())
        self.refreshInterval = refreshInterval
        self.minimumRefetchInterval = minimumRefetchInterval
    }

    /// The key with id `kid`, fetching the set first when it is missing, stale, or lacks `kid`.
    /// Returns nil when the current set has no such key. Throws ``JWKSError`` only when no key
    /// set at all can be had (the URL cannot be fetched and nothing was fetched before).
    func key(_ kid: String) async throws(JWKSError) -> _RSA.Signing.PublicKey? {
        guard case .url(let url) = origin else { return state.withLock { $0.keys?.keys[kid] } }
        let now = ContinuousClock.now
        let (keys, fetch) = state.withLock { state -> (JWKS?, Bool) in
            let stale = state.fetchedAt.map { now - $0 >= refreshInterval } ?? true
            let mayFetch = state.attemptedAt.map { now - $0 >= minimumRefetchInterval } ?? true
            let fetch = (state.keys?.keys[kid] == nil || stale) && mayFetch
            if fetch { state.attemptedAt = now }
            return (state.keys, fetch)
        }
        if fetch {
            do {
                let fetched = try await Self.fetch(url)
                state.withLock {
                    $0.keys = fetched
                    $0.fetchedAt = now
                }
                return fetched.keys[kid]
            } catch where keys != nil {
                // Keep using what was fetched before.
            }
        }
        guard let keys else { throw JWKSError("the JWKS at \(url) could not be fetched yet") }
        return keys.keys[kid]
    }

    private static func fetch(_ url: URL) async throws(JWKSError) -> JWKS {
        var request = URLRequest(url: url, timeoutInterval: 10)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let data: Data
        do {
            let (body, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
                throw JWKSError("\(url) answered \((response as? HTTPURLResponse)?.statusCode ?? 0)")
            }
            data = body
        } catch let error as JWKSError {
            throw error
        } catch {
            throw JWKSError("cannot fetch \(url): \(error.localizedDescription)")
        }
        do {
            return try JWKS(json: Array(data), source: url.absoluteString)
        } catch let error as JWKSError {
            throw error
        } catch {
            throw JWKSError("\(url): \(error)")
        }
    }
}
