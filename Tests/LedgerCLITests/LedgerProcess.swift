import Foundation

/// Runs the built `ledger` executable, which SwiftPM puts beside the test bundle.
struct LedgerProcess {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    static var executable: URL {
        let me = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        return me.deletingLastPathComponent().appendingPathComponent("ledger")
    }

    /// Runs `ledger ARGS` with `input` on standard input and waits for it.
    static func run(_ arguments: [String], input: String? = nil, environment: [String: String] = [:]) throws -> Output {
        let process = try start(arguments, input: input, environment: environment)
        return process.wait()
    }

    static func start(_ arguments: [String], input: String? = nil, environment: [String: String] = [:]) throws -> Running {
        // A child that exits before reading all its input must not take the test runner down.
        signal(SIGPIPE, SIG_IGN)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "DATABASE_URL")
        for (key, value) in environment { env[key] = value }
        process.environment = env
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

    final class Running: @unchecked Sendable {
        let process: Process
        private var out = Data(), err = Data()
        private let group = DispatchGroup()

        init(process: Process, stdout: Pipe, stderr: Pipe) {
            self.process = process
            group.enter()
            DispatchQueue.global().async { [self] in
                out = readAll(stdout.fileHandleForReading)
                group.leave()
            }
            group.enter()
            DispatchQueue.global().async { [self] in
                err = readAll(stderr.fileHandleForReading)
                group.leave()
            }
        }

        func wait() -> Output {
            process.waitUntilExit()
            group.wait()
            return Output(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                          stderr: String(decoding: err, as: UTF8.self))
        }
    }
}

/// Parses one JSON line printed by `ledger` with Foundation, independently of the ledger's own codec.
func jsonObject(_ line: String) throws -> [String: Any] {
    try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
}
