import ChecklistModel
import ChecklistWire

/// The tokens a server accepts and the namespace each one opens, as read
/// from a tokens file (`checklistd --tokens FILE`):
///
///     # one TOKEN NAMESPACE pair per line; '#' starts a comment
///     9f2c0d7e4b1a6c3d8e5f0a2b  alice
///     71be3f0c9d2a4e6b8c1d5f7a  bob
///
/// Tokens and namespaces are runs of non-blank characters (so neither can
/// hold a space or a `#`); a token is at most `Hello.maxTokenBytes` bytes and
/// appears once. Several tokens may open the same namespace (e.g. one per
/// device). Errors name the line, never the token: the file is a secret.
public struct TokenTable: Sendable, Hashable {
    struct Entry: Sendable, Hashable {
        var token: [UInt8]
        var namespace: Namespace
    }

    private(set) var entries: [Entry] = []

    public init() {}

    /// Number of tokens.
    public var count: Int { entries.count }

    /// Number of distinct namespaces the tokens open.
    public var namespaceCount: Int { Set(entries.map(\.namespace)).count }

    /// Adds one token; `TokenFileError` if it is empty, too long or present already.
    public mutating func add(token: String, namespace: Namespace) throws(TokenFileError) {
        try add(token: token, namespace: namespace, line: 0)
    }

    /// Parses the text of a tokens file.
    public static func parse(_ text: String) throws(TokenFileError) -> TokenTable {
        var table = TokenTable()
        var lineNumber = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let content = line.prefix { $0 != "#" }
            let words = content.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            switch words.count {
            case 0:
                continue
            case 2:
                try table.add(token: String(words[0]), namespace: Namespace(String(words[1])), line: lineNumber)
            default:
                throw TokenFileError(line: lineNumber, "expected TOKEN NAMESPACE, found \(words.count) words")
            }
        }
        return table
    }

    private mutating func add(token: String, namespace: Namespace, line: Int) throws(TokenFileError) {
        let bytes = Array(token.utf8)
        guard !bytes.isEmpty, !namespace.rawValue.isEmpty else { throw TokenFileError(line: line, "empty token or namespace") }
        guard bytes.count <= Hello.maxTokenBytes else {
            throw TokenFileError(line: line, "the token is longer than \(Hello.maxTokenBytes) bytes")
        }
        if let first = entries.firstIndex(where: { $0.token == bytes }) {
            throw TokenFileError(line: line, "the token of entry \(first + 1) appears again")
        }
        entries.append(Entry(token: bytes, namespace: namespace))
    }

    /// The namespace `token` opens, or nil. Compares the presented token
    /// with every entry, each in constant time, and never stops early, so
    /// the time taken depends on the presented token's length and the
    /// number of entries, not on how much of any secret token it matches.
    public func namespace(for token: String) -> Namespace? {
        let presented = Array(token.utf8)
        var found: Namespace?
        for entry in entries where ConstantTime.equals(presented, entry.token) {
            found = entry.namespace
        }
        return found
    }
}

/// A tokens file that cannot be used; `line` is 0 when no line applies.
public struct TokenFileError: Error, Sendable, Hashable, CustomStringConvertible {
    public var line: Int
    public var message: String

    public init(line: Int, _ message: String) {
        self.line = line
        self.message = message
    }

    public var description: String { line > 0 ? "line \(line): \(message)" : message }
}
