import ChecklistModel

/// A message of protocol v1: its frame type and its body codec. Each
/// message lives in its own file under Messages/.
public protocol WireMessage: Sendable, Equatable {
    static var messageType: MessageType { get }
    /// Decodes the body. Bytes after the last known field are left unread
    /// (forward compatibility); the caller ignores them.
    static func decode(from reader: inout WireReader) throws(ChecklistError) -> Self
    /// Appends the body.
    func encode(into writer: inout WireWriter)
}

extension WireMessage {
    /// Decodes a whole body held in an array.
    public static func decode(body: [UInt8]) throws(ChecklistError) -> Self {
        try WireReader.decode(body) { (r) throws(ChecklistError) in try Self.decode(from: &r) }
    }

    /// The body alone, for tests and vectors.
    public func encodedBody() -> [UInt8] {
        var w = WireWriter()
        encode(into: &w)
        return w.bytes
    }
}
