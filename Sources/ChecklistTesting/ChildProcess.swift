import CLinux  // pipe2
import ChecklistSocket
import ChecklistThreads
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How a child process ended.
public enum ExitStatus: Sendable, Hashable, CustomStringConvertible {
    case exited(Int32)
    case signaled(Int32)

    /// Decodes a `waitpid` status word.
    init(waitStatus status: Int32) {
        let signal = status & 0x7f
        self = signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
    }

    /// Shell convention: the exit code, or 128 + the signal number.
    public var code: Int32 {
        switch self {
        case .exited(let code): return code
        case .signaled(let signal): return 128 + signal
        }
    }

    public var description: String {
        switch self {
        case .exited(let code): return "exited with \(code)"
        case .signaled(let signal): return "killed by signal \(signal)"
        }
    }
}

/// A child process could not be found, started, or did not behave in time.
public struct ChildProcessError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A spawned child (posix_spawn) whose stdout and stderr a background thread
/// drains into memory (the last 8 MB of each), and which a second background
/// thread reaps. Neither thread holds the `ChildProcess` itself, only its
/// `ChildState`, so dropping the last reference can kill the child.
final class ChildProcess: Sendable {
    let pid: pid_t
    let state: ChildState

    /// Starts `executable`; stdin is /dev/null, or a pipe fed `standardInput`.
    init(executable: String, arguments: [String], environment: [String: String]?, standardInput: [UInt8]?) throws {
        let stdout = try Self.makePipe()
        let stderr = try Self.makePipe()
        let stdin = try standardInput.map { _ in try Self.makePipe() }
        var pid: pid_t = 0
        let error = Self.spawn(executable, arguments, environment, stdin: stdin?.read,
                               stdout: stdout.write, stderr: stderr.write, pid: &pid)
        for fd in [stdout.write, stderr.write] + (stdin.map { [$0.read] } ?? []) { closeSocket(fd) }
        guard error == 0 else {
            for fd in [stdout.read, stderr.read] + (stdin.map { [$0.write] } ?? []) { closeSocket(fd) }
            throw ChildProcessError("cannot start \(executable): \(String(cString: strerror(error)))")
        }
        self.pid = pid
        let state = ChildState()
        self.state = state
        Self.startReaper(pid: pid, state: state)
        Self.startDrain(stdout: stdout.read, stderr: stderr.read, state: state)
        if let stdin, let standardInput {
            // write(2), not the socket helpers' send(2): this is a pipe. If
            // the child exits without reading, the SIGPIPE that write raises
            // is aimed at this thread: blocked there, it cannot kill the
            // test process, and write fails with EPIPE instead.
            NativeThread.spawn(name: "child-stdin", blockedSignals: [SIGPIPE]) {
                var offset = 0
                standardInput.withUnsafeBytes { bytes in
                    while offset < bytes.count {
                        let n = write(stdin.write, bytes.baseAddress! + offset, bytes.count - offset)
                        if n > 0 { offset += n } else if n < 0 && errno != EINTR { break }
                    }
                }
                closeSocket(stdin.write)
            }.detach()
        }
    }

    /// Sends `signal` unless the child has been reaped (its pid could be reused).
    func signal(_ signal: Int32) {
        state.ifRunning { _ = kill(pid, signal) }
    }

    /// Waits for the exit (and then, briefly, for the rest of its output).
    func waitForExit(until deadline: ContinuousClock.Instant) -> ExitStatus? {
        let status = state.wait(until: deadline) { $0.status }
        if status != nil { _ = state.wait(until: .now + .seconds(2)) { $0.outputEnded ? true : nil } }
        return status
    }

    /// Waits until the child's stderr, from byte `offset` on, contains
    /// `text`, or `deadline` passes. Returns whether it did.
    func waitForStandardError(containing text: String, after offset: Int, until deadline: ContinuousClock.Instant) -> Bool {
        let needle = Array(text.utf8)
        return state.wait(until: deadline) { state -> Bool? in
            let bytes = state.stderr.dropFirst(offset)
            guard bytes.count >= needle.count else { return nil }
            return bytes.indices.dropLast(needle.count - 1).contains { bytes[$0..<$0 + needle.count].elementsEqual(needle) }
                ? true : nil
        } ?? false
    }

    private static func makePipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        // Close-on-exec, so a child spawned concurrently by another test does
        // not inherit our ends (a stray write end would keep EOF from coming).
        guard pipe2(&fds, O_CLOEXEC) == 0 else {
            throw ChildProcessError("pipe2 failed: \(String(cString: strerror(errno)))")
        }
        return (fds[0], fds[1])
    }

    /// posix_spawn with the given stdio, an empty signal mask and default
    /// dispositions for the usual signals (a test runner may block or ignore
    /// them, and children inherit both).
    private static func spawn(_ path: String, _ arguments: [String], _ environment: [String: String]?,
                              stdin: Int32?, stdout: Int32, stderr: Int32, pid: inout pid_t) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin {
            posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let variables = environment ?? ProcessInfo.processInfo.environment
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        return posix_spawn(&pid, path, &actions, &attributes, argv, envp)
    }

    private static func startDrain(stdout: Int32, stderr: Int32, state: ChildState) {
        NativeThread.spawn(name: "child-output", blockedSignals: []) {
            var open = [stdout, stderr]
            var chunk = [UInt8](repeating: 0, count: 65536)
            while !open.isEmpty {
                var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                guard poll(&fds, nfds_t(fds.count), -1) >= 0 || errno == EINTR else { break }
                for pfd in fds where pfd.revents != 0 {
                    let n = chunk.withUnsafeMutableBytes { read(pfd.fd, $0.baseAddress, $0.count) }
                    if n > 0 {
                        state.append(chunk[..<n], toStandardError: pfd.fd == stderr)
                    } else if n == 0 || (errno != EINTR && errno != EAGAIN) {
                        open.removeAll { $0 == pfd.fd }
                    }
                }
            }
            closeSocket(stdout)
            closeSocket(stderr)
            state.update { $0.outputEnded = true }
        }.detach()
    }

    private static func startReaper(pid: pid_t, state: ChildState) {
        NativeThread.spawn(name: "child-reaper", blockedSignals: []) {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 {
                if errno != EINTR {  // ECHILD: reaped elsewhere; report it as signal 127
                    status = 0x7f
                    break
                }
            }
            state.update { $0.status = ExitStatus(waitStatus: status) }
        }.detach()
    }
}

/// What the background threads learn about a child, under a
/// `ConditionLock`; every change wakes the waiters.
final class ChildState: Sendable {
    struct State {
        var stdout: [UInt8] = []
        var stderr: [UInt8] = []
        var status: ExitStatus?
        var outputEnded = false
        var peakResidentBytes: Int?
    }
    private let state = ConditionLock(State())
    private static let keep = 8 << 20

    var snapshot: State { state.withLock { $0 } }

    func update(_ body: (inout State) -> Void) {
        state.withLock { body(&$0) }
        state.broadcast(.progress)
    }

    func append(_ bytes: ArraySlice<UInt8>, toStandardError: Bool) {
        update { state in
            if toStandardError { Self.append(bytes, to: &state.stderr) } else { Self.append(bytes, to: &state.stdout) }
        }
    }

    private static func append(_ bytes: ArraySlice<UInt8>, to buffer: inout [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count > keep { buffer.removeFirst(buffer.count - keep) }
    }

    /// Runs `body` while holding the lock if the child has not been reaped yet.
    func ifRunning(_ body: () -> Void) {
        state.withLock { if $0.status == nil { body() } }
    }

    /// Waits until `condition` returns non-nil or `deadline` passes.
    func wait<T>(until deadline: ContinuousClock.Instant, _ condition: (State) -> T?) -> T? {
        var result: T?
        return state.withLock(waitingOn: .progress, until: { state in
            result = condition(state)
            return result != nil
        }, deadline: deadline) { _, _ in result }
    }
}
