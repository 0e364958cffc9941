/// Reads the values of options and arguments: whole numbers, seconds,
/// sizes, choices, `HOST:PORT`. Each reader takes the option's name (for
/// the message) and the text, and throws a `UsageError` saying what was
/// expected. `ParsedCommandLine` reads options with these; tools use them
/// directly for values they split themselves.
public enum ValueParser {
    /// A whole number within `min...max`.
    public static func integer<T: FixedWidthInteger>(_ name: String, _ text: String, min: T = 0, max: T = .max) throws(UsageError) -> T {
        guard let n = T(text), n >= min, n <= max else {
            let range = max == T.max && T.bitWidth >= 64 ? "from \(min)" : "from \(min) to \(max)"
            throw UsageError("\(name): '\(text)' is not a whole number \(range)")
        }
        return n
    }

    /// A number of seconds, 0 to 10^9 (above 0 with `positive`), fractions allowed.
    public static func seconds(_ name: String, _ text: String, positive: Bool = false) throws(UsageError) -> Double {
        guard let seconds = Double(text), seconds >= 0, seconds <= 1e9, !positive || seconds > 0 else {
            throw UsageError("\(name): '\(text)' is not a number of seconds" + (positive ? " above 0" : ""))
        }
        return seconds
    }

    /// `seconds` as a `Duration`, rounded up to a whole millisecond.
    public static func duration(_ seconds: Double) -> Duration {
        .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// A number above 0, fractions allowed.
    public static func positiveNumber(_ name: String, _ text: String) throws(UsageError) -> Double {
        guard let n = Double(text), n > 0, n.isFinite else { throw UsageError("\(name): '\(text)' is not a positive number") }
        return n
    }

    /// A size in bytes: a number, optionally with a unit (`KB`, `MB`, `GB`
    /// and `KiB`, `MiB`, `GiB` all count in 1024s; `B`), at least `min`.
    public static func bytes(_ name: String, _ text: String, min: Int = 0) throws(UsageError) -> Int {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        let unit = text.dropFirst(digits.count).lowercased()
        let scale: Int? = switch unit {
        case "", "b": 1
        case "k", "kb", "kib": 1 << 10
        case "m", "mb", "mib": 1 << 20
        case "g", "gb", "gib": 1 << 30
        default: nil
        }
        guard let scale, let n = Int(digits), n <= Int.max / scale else {
            throw UsageError("\(name): '\(text)' is not a size (e.g. 67108864, 64MB, 2GB)")
        }
        guard n * scale >= min else { throw UsageError("\(name): '\(text)' is less than \(min) bytes") }
        return n * scale
    }

    /// One of `choices`.
    public static func choice(_ name: String, _ text: String, _ choices: [String]) throws(UsageError) -> String {
        guard choices.contains(text) else { throw UsageError("\(name): '\(text)' is not \(alternatives(choices))") }
        return text
    }

    /// `a`, `a or b`, `a, b or c`.
    public static func alternatives(_ choices: [String]) -> String {
        guard let last = choices.last else { return "" }
        return choices.count == 1 ? last : choices.dropLast().joined(separator: ", ") + " or " + last
    }

    /// `HOST:PORT`, the host of an IPv6 address in brackets (`[::1]:7420`).
    public static func hostPort(_ name: String, _ text: String) throws(UsageError) -> HostPort {
        guard let address = HostPort(text) else {
            throw UsageError("\(name): '\(text)' is not HOST:PORT (e.g. 127.0.0.1:7420 or [::1]:7420)")
        }
        return address
    }
}

/// A host and a TCP port, as `HOST:PORT` or `[IPv6]:PORT`.
public struct HostPort: Sendable, Hashable, CustomStringConvertible {
    public let host: String
    public let port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`; nil without a host, a port, or with an unbracketed IPv6 address.
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]),
              text[text.index(after: colon)...].allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") || host.contains("[") || host.contains("]") {
            return nil
        }
        guard !host.isEmpty else { return nil }
        self.init(host: host, port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
