/// One server a client may connect to: a host name or numeric address and
/// a TCP port. Written `HOST:PORT`, an IPv6 address in brackets
/// (`[::1]:7420`); a list of them with commas (`a:7420,b:7420`), as the
/// tools' `--server` and `CHECKLIST_SERVER` take it.
public struct ServerAddress: Hashable, Sendable, CustomStringConvertible {
    /// A host name or a numeric IPv4/IPv6 address, without brackets.
    public var host: String
    /// The TCP port.
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT` (`[IPV6]:PORT` for IPv6); nil if it is not one.
    /// The port is 1-65535 in decimal and the host is not empty.
    public init?(parsing text: String) {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        let portText = text[text.index(after: colon)...]
        guard !portText.isEmpty, portText.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              let number = Int(portText), (1...65_535).contains(number) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), host.count > 2 else { return nil }
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") || host.contains("]") {
            return nil  // an IPv6 host needs brackets
        }
        guard !host.isEmpty else { return nil }
        self.init(host: host, port: UInt16(number))
    }

    /// Parses `HOST:PORT[,HOST:PORT...]` (spaces around the commas allowed);
    /// nil if any entry is not a `HOST:PORT` or the list is empty. Order is
    /// kept: clients try the servers in this order.
    public static func list(parsing text: String) -> [ServerAddress]? {
        var servers: [ServerAddress] = []
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = entry.trimmingSpaces()
            guard let server = ServerAddress(parsing: trimmed) else { return nil }
            servers.append(server)
        }
        return servers.isEmpty ? nil : servers
    }

    /// `host:port`, an IPv6 host in brackets.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
