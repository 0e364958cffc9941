#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// How much a log line matters; lines below the logger's level are dropped.
public enum LogLevel: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
    case debug, info, warn, error

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }

    public var description: String {
        switch self {
        case .debug: return "debug"
        case .info: return "info"
        case .warn: return "warn"
        case .error: return "error"
        }
    }

    public init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = level
    }
}

/// The server's event log: one line per event, `key=value` pairs (logfmt),
/// level and event first:
///
///     level=warn event=slow_request ts=2026-01-05T10:00:00.123Z conn=17 type=PATCH ms=120.4
///
/// Values with spaces, quotes or `=` are quoted with `"` (and `\"`, `\\`
/// inside). Each line is written with a single `write(2)` (to standard
/// error by default), so lines from different threads never interleave.
///
/// Events that can come in floods under load (one per connection: limits
/// hit, connection errors, slow requests) are rate limited per event name:
/// at most `maxLinesPerSecond` lines a second each; the first line after a
/// suppressed stretch carries `suppressed=N`.
///
/// Thread-safe: the limiter's table is behind a `Mutex`; writing needs no lock.
public final class ServerLog: Sendable {
    public let level: LogLevel
    public let maxLinesPerSecond: Int
    private let output: @Sendable (String) -> Void
    private let windows = Mutex<[String: Window]>([:])

    private struct Window {
        var second: Int
        var lines: Int
        var suppressed: Int
    }

    /// - Parameter output: receives each line with its trailing newline;
    ///   default writes it to standard error.
    public init(level: LogLevel = .info, maxLinesPerSecond: Int = 20,
                output: @escaping @Sendable (String) -> Void = ServerLog.writeToStandardError) {
        self.level = level
        self.maxLinesPerSecond = maxLinesPerSecond
        self.output = output
    }

    /// Whether lines of `level` are written (to skip building expensive fields).
    public func isEnabled(_ level: LogLevel) -> Bool { level >= self.level }

    /// Writes one line, unless below the level or rate limited.
    public func log(_ level: LogLevel, _ event: String, _ fields: KeyValuePairs<String, Any> = [:]) {
        guard isEnabled(level) else { return }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let second = now.tv_sec
        let admitted = windows.withLock { windows -> Int? in
            var window = windows[event] ?? Window(second: second, lines: 0, suppressed: 0)
            if window.second != second {
                window.second = second
                window.lines = 0
            }
            guard window.lines < maxLinesPerSecond else {
                window.suppressed += 1
                windows[event] = window
                return nil
            }
            window.lines += 1
            let suppressed = window.suppressed
            window.suppressed = 0
            windows[event] = window
            return suppressed
        }
        guard let suppressed = admitted else { return }
        var line = "level=\(level) event=\(Self.value(event)) ts=\(Self.timestamp(now))"
        for (key, value) in fields {
            line += " \(key)=\(Self.value(String(describing: value)))"
        }
        if suppressed > 0 { line += " suppressed=\(suppressed)" }
        output(line + "\n")
    }

    public func debug(_ event: String, _ fields: KeyValuePairs<String, Any> = [:]) { log(.debug, event, fields) }
    public func info(_ event: String, _ fields: KeyValuePairs<String, Any> = [:]) { log(.info, event, fields) }
    public func warn(_ event: String, _ fields: KeyValuePairs<String, Any> = [:]) { log(.warn, event, fields) }
    public func error(_ event: String, _ fields: KeyValuePairs<String, Any> = [:]) { log(.error, event, fields) }

    /// Writes `line` to descriptor 2 with one `write(2)` (retrying the rest
    /// after a short write or EINTR).
    public static func writeToStandardError(_ line: String) {
        var line = line
        line.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }

    /// A logfmt value: bare when it is a plain token, else quoted.
    static func value(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy {
            $0.value > 0x20 && $0.value != 0x7F && $0 != "\"" && $0 != "=" && $0 != "\\"
        }
        if plain { return text }
        var quoted = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: quoted += " "
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }

    /// `2026-01-05T10:00:00.123Z`.
    static func timestamp(_ now: timespec) -> String {
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let millis = Int(now.tv_nsec / 1_000_000)
        let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(ms)Z"
    }
}
