import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs the built `ledger` executable, which SwiftPM puts beside the test bundle, with a time
/// limit, a kill switch and the output read while the process runs.
public struct LedgerProcess {
    /// What a finished process left behind.
    public struct Output {
        public var status: Int32
        /// True when the process was ended by a signal (a crash, or our SIGKILL).
        public var signalled: Bool
        /// True when it ran past its time limit and was killed.
        public var timedOut: Bool
        public var stdout: String
        public var stderr: String
        public var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    public static var executable: URL {
        let me = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        return me.deletingLastPathComponent().appendingPathComponent("ledger")
    }

    /// Runs `ledger ARGS` with `input` on standard input and waits for it, at most `timeout` seconds.
    public static func run(_ arguments: [String], input: String? = nil, timeout: TimeInterval = 120,
                           environment extra: [String: String] = [:]) throws -> Output {
        try start(arguments, input: input, environment: extra).wait(timeout: timeout)
    }

    /// Starts `ledger ARGS` without DATABASE_URL in its environment, with `extra` added to it.
    public static func start(_ arguments: [String], input: String? = nil,
                             environment extra: [String: String] = [:]) throws -> Running {
        // A child that exits before reading all its input must not take the test runner down.
        signal(SIGPIPE, SIG_IGN)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "DATABASE_URL")
        environment.merge(extra) { $1 }
        process.environment = environment
        let stdout = Pipe(), stderr = Pipe(), stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin
        try process.run()
        let running = Running(process: process, stdout: stdout, stderr: stderr)
        if let input {
            DispatchQueue.global().async {
                writeAll(stdin.fileHandleForWriting, Data(input.utf8))
                try? stdin.fileHandleForWriting.close()
            }
        } else {
            try? stdin.fileHandleForWriting.close()
        }
        return running
    }

    /// A started `ledger`; its output is collected while it runs.
    public final class Running: @unchecked Sendable {
        // @unchecked: `out` and `err` are only touched under `lock`.
        public let process: Process
        private let lock = NSLock()
        private var out = Data(), err = Data()
        private let group = DispatchGroup()

        init(process: Process, stdout: Pipe, stderr: Pipe) {
            self.process = process
            collect(stdout.fileHandleForReading, toStandardOutput: true)
            collect(stderr.fileHandleForReading, toStandardOutput: false)
        }

        private func collect(_ handle: FileHandle, toStandardOutput: Bool) {
            group.enter()
            DispatchQueue.global().async { [self] in
                while true {
                    let chunk = readChunk(handle)
                    if chunk.isEmpty { break }
                    lock.withLock { if toStandardOutput { out.append(chunk) } else { err.append(chunk) } }
                }
                group.leave()
            }
        }

        public var processIdentifier: Int32 { process.processIdentifier }

        /// The complete lines printed on standard output so far.
        public var linesSoFar: [String] {
            let text = lock.withLock { String(decoding: out, as: UTF8.self) }
            guard let end = text.lastIndex(of: "\n") else { return [] }
            return text[..<end].split(separator: "\n").map(String.init)
        }

        /// Waits until `condition` holds for the lines printed so far, the process ended, or
        /// `timeout` passed; returns whether the condition held.
        public func waitForOutput(timeout: TimeInterval, _ condition: ([String]) -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if condition(linesSoFar) { return true }
                if !process.isRunning { return condition(linesSoFar) }
                usleep(20_000)
            }
            return false
        }

        /// Sends `signal` to the process.
        public func kill(_ signal: Int32 = SIGKILL) {
            if process.isRunning { _ = Glibc.kill(process.processIdentifier, signal) }
        }

        /// Waits for the process to end; past `timeout` seconds it is killed and marked timed out.
        /// Never waits without a bound: if the end of a killed process is not seen within 10 s
        /// more, the output so far is returned with status -1.
        public func wait(timeout: TimeInterval = 120) -> Output {
            var deadline = Date().addingTimeInterval(timeout)
            var timedOut = false
            while process.isRunning {
                if Date() > deadline {
                    if timedOut { break }
                    timedOut = true
                    kill()
                    deadline = Date().addingTimeInterval(10)
                }
                usleep(10_000)
            }
            let ended = !process.isRunning
            if ended { _ = group.wait(timeout: .now() + 10) }
            return lock.withLock {
                Output(status: ended ? process.terminationStatus : -1,
                       signalled: ended && process.terminationReason == .uncaughtSignal,
                       timedOut: timedOut, stdout: String(decoding: out, as: UTF8.self),
                       stderr: String(decoding: err, as: UTF8.self))
            }
        }
    }
}

/// Parses one JSON line printed by `ledger` with Foundation, independently of the ledger's own codec.
public func jsonObject(_ line: String) throws -> [String: Any] {
    try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
}
