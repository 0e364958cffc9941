#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if os(Linux)
import CLinux
#endif

/// An IPv4 or IPv6 address with a port, as numbers (no name resolution
/// except the literal name `localhost`, which means 127.0.0.1).
///
/// Text forms: `"127.0.0.1:8080"`, `"localhost:8080"`, `"[::1]:8080"`.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    public enum Family: Sendable, Hashable { case ipv4, ipv6 }

    /// 4 (IPv4) or 16 (IPv6) address bytes in network order.
    private let addressBytes: [UInt8]
    /// The port in host byte order.
    public let port: UInt16

    public var family: Family { addressBytes.count == 4 ? .ipv4 : .ipv6 }

    /// Parses a numeric host (IPv4 dotted quad, IPv6 with or without brackets,
    /// or `localhost`) and pairs it with `port`.
    public init(host: String, port: UInt16) throws(SocketError) {
        var name = host
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name == "localhost" { name = "127.0.0.1" }
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 {
            self.addressBytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else {
            var v6 = in6_addr()
            guard inet_pton(AF_INET6, name, &v6) == 1 else {
                throw SocketError(code: EINVAL, operation: "parse host \"\(host)\"")
            }
            self.addressBytes = withUnsafeBytes(of: &v6) { Array($0) }
        }
        self.port = port
    }

    /// Parses `"HOST:PORT"`; an IPv6 host must be in brackets (`"[::1]:8080"`).
    public init(parsing text: String) throws(SocketError) {
        let invalid = SocketError(code: EINVAL, operation: "parse address \"\(text)\"")
        guard let colon = text.lastIndex(of: ":") else { throw invalid }
        let host = String(text[..<colon])
        guard let port = UInt16(text[text.index(after: colon)...]), !host.isEmpty else { throw invalid }
        if host.contains(":"), !(host.hasPrefix("[") && host.hasSuffix("]")) { throw invalid }
        do {
            try self.init(host: host, port: port)
        } catch {
            throw invalid
        }
    }

    /// Reads an address the kernel filled in (accept, getsockname, getpeername).
    /// Returns nil for families other than IPv4/IPv6.
    public init?(_ storage: sockaddr_storage) {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            let sin = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
            var address = sin.sin_addr
            self.addressBytes = withUnsafeBytes(of: &address) { Array($0) }
            self.port = UInt16(bigEndian: sin.sin_port)
        case AF_INET6:
            let sin6 = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
            var address = sin6.sin6_addr
            self.addressBytes = withUnsafeBytes(of: &address) { Array($0) }
            self.port = UInt16(bigEndian: sin6.sin6_port)
        default:
            return nil
        }
    }

    /// The numeric host, without brackets: `"127.0.0.1"` or `"::1"`.
    public var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let af = family == .ipv4 ? AF_INET : AF_INET6
        addressBytes.withUnsafeBytes { raw in
            _ = inet_ntop(af, raw.baseAddress, &text, socklen_t(text.count))
        }
        return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// `"127.0.0.1:8080"` or `"[::1]:8080"`.
    public var description: String {
        family == .ipv4 ? "\(host):\(port)" : "[\(host)]:\(port)"
    }

    /// The `AF_INET`/`AF_INET6` constant for `socket(2)`.
    public var addressFamily: Int32 { family == .ipv4 ? AF_INET : AF_INET6 }

    /// Calls `body` with a `sockaddr` for this address; the pointer is valid
    /// only inside `body`.
    public func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) rethrows -> R {
        switch family {
        case .ipv4:
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &sin.sin_addr) { $0.copyBytes(from: addressBytes) }
            return try withUnsafePointer(to: &sin) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .ipv6:
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &sin6.sin6_addr) { $0.copyBytes(from: addressBytes) }
            return try withUnsafePointer(to: &sin6) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
    }
}
