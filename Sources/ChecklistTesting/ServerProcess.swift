import CLinux  // signal constants in default arguments
import ChecklistSocket
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A server executable (normally `checklistd`) run as a child process for
/// tests and benchmarks.
///
/// Starting it waits until its stdout has a line containing
/// `listening on HOST:PORT` (no sleeping: it waits on the output pipe, up to
/// `readyTimeout`, and otherwise throws with the child's stdout and stderr).
/// Background threads keep draining stdout and stderr into memory, so the
/// child never blocks on a full pipe. The child is killed on deinit if it
/// is still running.
///
///     let data = try TemporaryDirectory()
///     let server = try ServerProcess.start(
///         executable: try ProductLocator.path(of: "checklistd"),
///         arguments: ["--host", "127.0.0.1", "--port", "0", "--data-dir", data.path])
///     defer { server.stop() }
///     connect(to: server.host, server.port)
///
/// Sendable: immutable facts are `let`s; output and exit status live in a
/// Mutex-guarded state shared with the background threads.
public final class ServerProcess: Sendable {
    public let executablePath: String
    public let arguments: [String]
    /// From the `listening on` line.
    public let host: String
    public let port: UInt16
    private let child: ChildProcess

    /// Starts `executable` and waits until it reports `listening on HOST:PORT`.
    ///
    /// - Parameters:
    ///   - environment: the child's environment; nil inherits this process's.
    ///   - readyTimeout: how long to wait for the `listening on` line.
    public init(executable: String, arguments: [String], environment: [String: String]? = nil,
                readyTimeout: Duration = .seconds(30)) throws {
        executablePath = executable
        self.arguments = arguments
        child = try ChildProcess(executable: executable, arguments: arguments, environment: environment, standardInput: nil)
        var examined = 0  // stdout bytes already searched for complete lines
        let listening = child.state.wait(until: .now + readyTimeout) { state -> Result<SocketAddress, ChildProcessError>? in
            if let address = Self.findListeningLine(in: state.stdout, from: &examined) { return .success(address) }
            if let status = state.status, state.outputEnded {
                return .failure(ChildProcessError("\(executable) \(status) before reporting \"listening on HOST:PORT\"."))
            }
            return nil
        }
        let failure: ChildProcessError
        switch listening {
        case .success(let address)?:
            host = address.host
            port = address.port
            return
        case .failure(let error)?:
            failure = error
        case nil:
            child.signal(SIGKILL)
            _ = child.waitForExit(until: .now + .seconds(10))
            failure = ChildProcessError("\(executable) did not report \"listening on HOST:PORT\" within \(readyTimeout); killed it.")
        }
        let state = child.state.snapshot
        throw ChildProcessError("""
            \(failure.message)
            --- stdout ---
            \(String(decoding: state.stdout, as: UTF8.self))
            --- stderr ---
            \(String(decoding: state.stderr, as: UTF8.self))
            """)
    }

    /// Same as `init`; reads well at call sites.
    public static func start(executable: String, arguments: [String], environment: [String: String]? = nil,
                             readyTimeout: Duration = .seconds(30)) throws -> ServerProcess {
        try ServerProcess(executable: executable, arguments: arguments, environment: environment,
                          readyTimeout: readyTimeout)
    }

    deinit {
        if child.state.snapshot.status == nil {
            child.signal(SIGKILL)
            _ = child.waitForExit(until: .now + .seconds(10))
        }
    }

    public var pid: pid_t { child.pid }

    /// `"host:port"` (IPv6 in brackets), as a client would be given it.
    public var address: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// What the child wrote to stdout so far (the last 8 MB at most).
    public var standardOutput: String { String(decoding: child.state.snapshot.stdout, as: UTF8.self) }
    /// What the child wrote to stderr so far (the last 8 MB at most).
    public var standardError: String { String(decoding: child.state.snapshot.stderr, as: UTF8.self) }

    /// The exit status, once the child has exited.
    public var exitStatus: ExitStatus? { child.state.snapshot.status }

    /// Peak resident memory of the child (`VmHWM`), read now if it is
    /// running, else the last value read (`stop()` reads it before signalling).
    public var peakResidentBytes: Int? {
        samplePeakResidentBytes()
        return child.state.snapshot.peakResidentBytes
    }

    /// Sends `signal` and waits up to `timeout` for the child to exit, then
    /// kills it (SIGKILL) if it has not. Returns how it ended (nil only if
    /// even SIGKILL did not end it within 10 s).
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, timeout: Duration = .seconds(10)) -> ExitStatus? {
        if let status = exitStatus { return status }
        samplePeakResidentBytes()
        child.signal(signal)
        if let status = child.waitForExit(until: .now + timeout) { return status }
        return kill()
    }

    /// Kills the child (SIGKILL) and waits up to 10 s for it.
    @discardableResult
    public func kill() -> ExitStatus? {
        if let status = exitStatus { return status }
        child.signal(SIGKILL)
        return child.waitForExit(until: .now + .seconds(10))
    }

    /// Sends `signal` without waiting (e.g. SIGHUP to reload).
    public func send(signal: Int32) {
        child.signal(signal)
    }

    /// How many bytes the child has written to stderr so far: pass it to
    /// `waitForStandardError(containing:after:timeout:)` to wait for a line
    /// written after this moment.
    public var standardErrorCount: Int { child.state.snapshot.stderr.count }

    /// Waits up to `timeout` until the child's stderr, from byte `offset`
    /// on, contains `text` (e.g. the log line a SIGHUP reload writes).
    /// Returns whether it did.
    public func waitForStandardError(containing text: String, after offset: Int = 0, timeout: Duration = .seconds(10)) -> Bool {
        child.waitForStandardError(containing: text, after: offset, until: .now + timeout)
    }

    /// Waits up to `timeout` for the child to exit on its own.
    public func waitForExit(timeout: Duration) -> ExitStatus? {
        child.waitForExit(until: .now + timeout)
    }

    private func samplePeakResidentBytes() {
        guard exitStatus == nil,
              let status = try? String(contentsOfFile: "/proc/\(child.pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "")
        else { return }
        child.state.update { $0.peakResidentBytes = max($0.peakResidentBytes ?? 0, kilobytes * 1024) }
    }

    /// Searches complete lines of `stdout` after offset `examined` for
    /// `listening on HOST:PORT`, advancing `examined` past the lines checked.
    static func findListeningLine(in stdout: [UInt8], from examined: inout Int) -> SocketAddress? {
        while let newline = stdout[examined...].firstIndex(of: UInt8(ascii: "\n")) {
            let line = String(decoding: stdout[examined..<newline], as: UTF8.self)
            examined = newline + 1
            guard let marker = line.range(of: "listening on ") else { continue }
            let token = line[marker.upperBound...].prefix { !$0.isWhitespace }
            if let address = try? SocketAddress(parsing: String(token)) { return address }
        }
        return nil
    }
}
