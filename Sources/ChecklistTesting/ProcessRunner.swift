#if canImport(Glibc)
import Glibc
#endif

/// Runs a command (e.g. the `checklist` CLI) to completion, or starts one
/// whose output a test can wait on while it runs (`RunningCommand`).
public enum ProcessRunner {
    public struct Result: Sendable, Hashable {
        /// The exit code, or 128 + signal number if killed by a signal.
        public var status: Int32
        public var exitStatus: ExitStatus
        public var stdout: String
        public var stderr: String
    }

    /// Runs `executable` with `arguments`, feeding `standardInput` (or
    /// /dev/null), and collects its output.
    ///
    /// - Throws: `ChildProcessError` if it cannot start or does not finish
    ///   within `timeout` (it is killed then; the error includes its output).
    public static func run(executable: String, arguments: [String], environment: [String: String]? = nil,
                           standardInput: [UInt8]? = nil, timeout: Duration = .seconds(60)) throws -> Result {
        try RunningCommand(executable: executable, arguments: arguments, environment: environment,
                           standardInput: standardInput).finish(timeout: timeout)
    }
}

/// A command running in the background: wait for a line it writes (its
/// readiness), then for its end and output.
///
/// Sendable: the facts are `let`s; output and exit status live in the
/// child's Mutex-guarded state, shared with its background threads.
public final class RunningCommand: Sendable {
    public let executable: String
    public let arguments: [String]
    private let child: ChildProcess

    /// Starts `executable`; stdin is /dev/null, or a pipe fed `standardInput`.
    public init(executable: String, arguments: [String], environment: [String: String]? = nil,
                standardInput: [UInt8]? = nil) throws {
        self.executable = executable
        self.arguments = arguments
        child = try ChildProcess(executable: executable, arguments: arguments, environment: environment,
                                 standardInput: standardInput)
    }

    /// Waits up to `timeout` until the command's stderr contains `text`.
    public func waitForStandardError(containing text: String, timeout: Duration = .seconds(30)) -> Bool {
        child.waitForStandardError(containing: text, after: 0, until: .now + timeout)
    }

    /// Waits for the command to end and returns its status and output.
    ///
    /// - Throws: `ChildProcessError` if it does not end within `timeout`
    ///   (it is killed then; the error includes its output).
    public func finish(timeout: Duration) throws -> ProcessRunner.Result {
        guard let status = child.waitForExit(until: .now + timeout) else {
            child.signal(SIGKILL)
            _ = child.waitForExit(until: .now + .seconds(10))
            let state = child.state.snapshot
            throw ChildProcessError("""
                \(executable) \(arguments) did not finish within \(timeout); killed it.
                --- stdout ---
                \(String(decoding: state.stdout, as: UTF8.self))
                --- stderr ---
                \(String(decoding: state.stderr, as: UTF8.self))
                """)
        }
        let state = child.state.snapshot
        return ProcessRunner.Result(status: status.code, exitStatus: status,
                                    stdout: String(decoding: state.stdout, as: UTF8.self),
                                    stderr: String(decoding: state.stderr, as: UTF8.self))
    }
}
