import Foundation
import Logging
import StoreAPIs
import Synchronization

/// `shared/tools/fake-store-api`, the loopback double of both stores, run for one test: its own
/// keys, state and calls log in a temporary folder, on a free port. `stop()` ends it.
public final class FakeStoreAPI: @unchecked Sendable {
    // @unchecked: every stored property is set in `init` and never changed; `Process` is used from
    // one task at a time (start, then stop).
    public let directory: URL
    public let baseURL: String
    public let appleKeyId: String
    public let appleIssuerId: String
    private let process: Process

    /// `shared/` beside the repository (override with FAKE_STORE_API).
    public static let tool: String = ProcessInfo.processInfo.environment["FAKE_STORE_API"] ?? URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/tools/fake-store-api").path

    public static let packageName = "com.example.game"
    public static let bundleId = "com.example.game"

    /// Writes keys, then `state` (with `credentials` added) and starts the fake on port 0.
    public init(state: [String: Any]) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("fake-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        _ = try await Self.run(["keys", "--out", directory.appendingPathComponent("keys").path])
        var state = state
        state["credentials"] = "keys/credentials.json"
        try JSONSerialization.data(withJSONObject: state).write(to: directory.appendingPathComponent("state.json"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.tool)
        process.arguments = ["--state", directory.appendingPathComponent("state.json").path,
                             "--calls", directory.appendingPathComponent("calls.jsonl").path, "--port", "0"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let line = try await Self.firstLine(of: output.fileHandleForReading)
        guard line.hasPrefix("listening ") else {
            process.terminate()
            throw FakeError("fake-store-api did not start: \(line)")
        }
        baseURL = String(line.dropFirst("listening ".count))
        let keys = try await Self.run(["keys", "--out", directory.appendingPathComponent("keys").path, "--base-url", baseURL])
        let ids = try JSONSerialization.jsonObject(with: Data(keys.utf8)) as? [String: Any] ?? [:]
        appleKeyId = ids["appleKeyId"] as? String ?? ""
        appleIssuerId = ids["appleIssuerId"] as? String ?? ""
    }

    /// Kills the fake (SIGKILL: the test process's threads block SIGTERM, and a child inherits
    /// that mask, so the fake would never see it) and removes its folder. It writes each call to
    /// CALLS.jsonl as it answers, so nothing is lost.
    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        try? FileManager.default.removeItem(at: directory)
    }

    public var serviceAccountFile: String { directory.appendingPathComponent("keys/google-service-account.json").path }
    public var appleKeyFile: String { directory.appendingPathComponent("keys/apple-api-key.p8").path }

    public func serviceAccount() throws -> GoogleServiceAccount {
        try GoogleServiceAccount(json: Data(contentsOf: URL(fileURLWithPath: serviceAccountFile)))
    }

    public func appleKey() throws -> AppStoreAPIKey {
        try AppStoreAPIKey(pem: String(contentsOfFile: appleKeyFile, encoding: .utf8), keyId: appleKeyId, issuerId: appleIssuerId)
    }

    /// The requests the fake received, in order (CALLS.jsonl).
    public func calls() throws -> [Call] {
        let url = directory.appendingPathComponent("calls.jsonl")
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        return try text.split(separator: "\n").map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw FakeError("a calls line is not an object")
            }
            return Call(object: object)
        }
    }

    /// One line of CALLS.jsonl.
    public struct Call: @unchecked Sendable {
        // @unchecked: a parsed JSON object, read only.
        public let object: [String: Any]
        public var api: String { object["api"] as? String ?? "" }
        public var method: String { object["method"] as? String ?? "" }
        public var path: String { object["path"] as? String ?? "" }
        public var status: Int? { object["status"] as? Int }
        public var auth: String? { object["auth"] as? String }
        public var query: [String: Any] { object["query"] as? [String: Any] ?? [:] }
        public var body: [String: Any]? { object["body"] as? [String: Any] }
        public var isToken: Bool { api == "token" }
    }

    public static func run(_ arguments: [String]) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = await offThePool { output.fileHandleForReading.readDataToEndOfFile() }
        // Its output is closed: it is exiting. Poll rather than `waitUntilExit`, which spins a run
        // loop on a thread of the cooperative pool.
        while process.isRunning { try await Task.sleep(for: .milliseconds(10)) }
        guard process.terminationStatus == 0 else { throw FakeError("fake-store-api \(arguments.first ?? "") failed") }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Reads up to the first newline.
    static func firstLine(of handle: FileHandle) async throws -> String {
        await offThePool {
            var bytes = Data()
            while let chunk = try? handle.read(upToCount: 1), !chunk.isEmpty, chunk != Data("\n".utf8) {
                bytes.append(chunk)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Runs a blocking read on a dispatch thread, not on one of the few threads of Swift's
    /// cooperative pool (which every test shares).
    static func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }
}

public struct FakeError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Runs `body` with a started fake and a fresh HTTP client, stopping both whatever happens.
public func withFake<T>(_ state: [String: Any], configuration: StoreHTTPClient.Configuration = .init(),
                 logger: Logger = Logger(label: "StoreAPIsTests"),
                 _ body: (FakeStoreAPI, StoreHTTPClient) async throws -> T) async throws -> T {
    let fake = try await FakeStoreAPI(state: state)
    let http = StoreHTTPClient(configuration: configuration, logger: logger)
    do {
        let result = try await body(fake, http)
        try await http.shutdown()
        fake.stop()
        return result
    } catch {
        try? await http.shutdown()
        fake.stop()
        throw error
    }
}

/// A compact JWS whose payload is `payload` (unsigned: the clients do not verify what they pass on).
public func unsignedJWS(_ payload: String) -> String {
    func b64(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
    return b64(#"{"alg":"ES256","x5c":[]}"#) + "." + b64(payload) + ".c2lnbmF0dXJl"
}

