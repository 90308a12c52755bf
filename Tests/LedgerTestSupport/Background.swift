import Foundation

/// Runs `body` on a thread of its own (blocking libpq work must not occupy Swift's small
/// cooperative pool), and returns a handle to wait for its result.
public final class Background<T>: @unchecked Sendable {
    // @unchecked: `result` is written once before `done` is signalled and read only after.
    private var result: Result<T, Error>?
    private let done = DispatchSemaphore(value: 0)

    public init(_ body: @escaping @Sendable () throws -> T) {
        DispatchQueue.global().async { [self] in
            result = Result { try body() }
            done.signal()
        }
    }

    /// True once the body returned or threw.
    public var isFinished: Bool {
        guard done.wait(timeout: .now()) == .success else { return false }
        done.signal()
        return true
    }

    /// The body's value, or nil when it did not finish within `timeout` seconds; rethrows its error.
    public func value(timeout: TimeInterval = 120) async throws -> T? {
        let end = Date().addingTimeInterval(timeout)
        while !isFinished {
            if Date() > end { return nil }
            try await Task.sleep(for: .milliseconds(5))
        }
        return try result!.get()
    }
}
