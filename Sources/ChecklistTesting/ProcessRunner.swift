#if canImport(Glibc)
import Glibc
#endif

/// Runs a short-lived command (e.g. the `checklist` CLI) to completion.
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
        let child = try ChildProcess(executable: executable, arguments: arguments, environment: environment,
                                     standardInput: standardInput)
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
        return Result(status: status.code, exitStatus: status,
                      stdout: String(decoding: state.stdout, as: UTF8.self),
                      stderr: String(decoding: state.stderr, as: UTF8.self))
    }
}
