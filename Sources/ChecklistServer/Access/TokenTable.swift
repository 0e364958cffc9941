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
///
/// A line whose first word begins with `cert:` names a TLS client
/// certificate instead of a token (mutual TLS, `checklistd --tls-client-ca`):
///
///     cert:CN=carol,O=Example  carol
///
/// Between `cert:` and the last word is the certificate's subject in
/// RFC 2253 form, exactly as `openssl x509 -noout -subject -nameopt RFC2253`
/// prints it after `subject=` (it may contain spaces, not `#`); the last
/// word is the namespace. Each subject appears once.
public struct TokenTable: Sendable, Hashable {
    struct Entry: Sendable, Hashable {
        var token: [UInt8]
        var namespace: Namespace
    }

    private(set) var entries: [Entry] = []
    /// Client certificate subjects (not secrets) and the namespace each opens.
    private(set) var certificates: [String: Namespace] = [:]

    public init() {}

    /// Number of tokens.
    public var count: Int { entries.count }

    /// Number of certificate subjects (`cert:` lines).
    public var certificateCount: Int { certificates.count }

    /// Number of distinct namespaces the tokens and certificate subjects open.
    public var namespaceCount: Int { Set(entries.map(\.namespace)).union(certificates.values).count }

    /// Lets the client certificate with this subject (RFC 2253) open
    /// `namespace`; `TokenFileError` if it is empty or present already.
    public mutating func add(certificateSubject: String, namespace: Namespace) throws(TokenFileError) {
        try add(certificateSubject: certificateSubject, namespace: namespace, line: 0)
    }

    private mutating func add(certificateSubject subject: String, namespace: Namespace, line: Int) throws(TokenFileError) {
        guard !subject.isEmpty, !namespace.rawValue.isEmpty else {
            throw TokenFileError(line: line, "expected cert:SUBJECT NAMESPACE")
        }
        guard certificates[subject] == nil else {
            throw TokenFileError(line: line, "the certificate subject \(subject) appears again")
        }
        certificates[subject] = namespace
    }

    /// The namespace the client certificate with this subject opens, or nil.
    public func namespace(forCertificateSubject subject: String) -> Namespace? {
        certificates[subject]
    }

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
            if let first = words.first, first.hasPrefix(Self.certificatePrefix) {
                let namespace = words.count > 1 ? String(words.last!) : ""
                let afterPrefix = content.drop { $0 == " " || $0 == "\t" }.dropFirst(Self.certificatePrefix.count)
                let subject = words.count > 1
                    ? afterPrefix[..<words.last!.startIndex].trimmingBlanks() : ""
                try table.add(certificateSubject: subject, namespace: Namespace(namespace), line: lineNumber)
                continue
            }
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

    /// What begins a certificate line.
    static let certificatePrefix = "cert:"

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

extension Substring {
    /// Without leading and trailing blanks (spaces, tabs, carriage returns).
    fileprivate func trimmingBlanks() -> String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        return String(drop(while: blank).reversed().drop(while: blank).reversed())
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
