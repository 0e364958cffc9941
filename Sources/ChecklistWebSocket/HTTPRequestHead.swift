/// The head of an HTTP/1.x request (RFC 9112): request line and header
/// fields, as the web port reads it before serving a file or upgrading to
/// WebSocket. Pure: no I/O.
public struct HTTPRequestHead: Hashable, Sendable {
    public var method: String
    /// The request target as sent (`/`, `/ws`, `/js/client.js?x=1`).
    public var target: String
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    /// Header fields in order, names lowercased, values trimmed.
    public var fields: [(name: String, value: String)]

    /// The target without its query.
    public var path: Substring { target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "" }

    /// Every value of the field `name` (lowercase), joined with ", " (RFC 9110 section 5.3); nil if absent.
    public func field(_ name: String) -> String? {
        let values = fields.filter { $0.name == name }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// How many fields named `name` there are.
    public func fieldCount(_ name: String) -> Int { fields.filter { $0.name == name }.count }

    /// The comma-separated tokens of field `name`, lowercased.
    public func tokens(_ name: String) -> [String] {
        (field(name) ?? "").split(separator: ",").map { $0.trimmingSpaces.lowercased() }.filter { !$0.isEmpty }
    }

    /// The connection is kept open after the answer (HTTP/1.1 without
    /// `Connection: close`).
    public var keepsAlive: Bool { minorVersion >= 1 && !tokens("connection").contains("close") }

    public static func == (a: HTTPRequestHead, b: HTTPRequestHead) -> Bool {
        a.method == b.method && a.target == b.target && a.minorVersion == b.minorVersion
            && a.fields.map(\.name) == b.fields.map(\.name) && a.fields.map(\.value) == b.fields.map(\.value)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(target)
    }

    /// A request head the web port refuses: the status to answer with.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// 400 (malformed), 431 (too large) or 505 (not HTTP/1.x).
        public let status: Int
        public let message: String
        public var description: String { "\(status): \(message)" }
    }

    /// Parses the head at the start of `bytes`: nil while it is incomplete
    /// (and shorter than `maxBytes`), else the head and its length
    /// including the blank line.
    public static func parse(_ bytes: UnsafeRawBufferPointer, maxBytes: Int) throws(ParseError) -> (head: HTTPRequestHead, count: Int)? {
        guard let end = endOfHead(bytes) else {
            if bytes.count >= maxBytes { throw ParseError(status: 431, message: "request head longer than \(maxBytes) bytes") }
            return nil
        }
        if end > maxBytes { throw ParseError(status: 431, message: "request head longer than \(maxBytes) bytes") }
        guard let text = String(validating: bytes[..<(end - 4)], as: UTF8.self) else {
            throw ParseError(status: 400, message: "request head is not UTF-8")
        }
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard requestLine.count == 3, !requestLine[0].isEmpty, requestLine[1].hasPrefix("/") else {
            throw ParseError(status: 400, message: "bad request line")
        }
        let version = requestLine[2]
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            throw ParseError(status: 505, message: "only HTTP/1.0 and HTTP/1.1")
        }
        var fields: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw ParseError(status: 400, message: "bad header line")
            }
            let name = line[..<colon]
            guard !name.contains(" "), !name.contains("\t") else { throw ParseError(status: 400, message: "space in a header name") }
            fields.append((name.lowercased(), String(line[line.index(after: colon)...].trimmingSpaces)))
        }
        let head = HTTPRequestHead(method: String(requestLine[0]), target: String(requestLine[1]),
                                   minorVersion: version == "HTTP/1.1" ? 1 : 0, fields: fields)
        return (head, end)
    }

    /// The offset just past the first CRLFCRLF, if any.
    static func endOfHead(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 3..<bytes.count where bytes[i] == 0x0A && bytes[i - 1] == 0x0D && bytes[i - 2] == 0x0A && bytes[i - 3] == 0x0D {
            return i + 1
        }
        return nil
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: Substring {
        var s = self
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return s
    }
}
