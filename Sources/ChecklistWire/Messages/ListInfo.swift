import ChecklistModel

/// LIST (0x91 after CREATE_LIST, 0x92 after UPDATE_LIST): one list summary.
public struct ListInfo: WireMessage {
    /// The CREATE_LIST answer type; UPDATE_LIST answers the same body as 0x92.
    public static let messageType = MessageType.listCreated

    public var summary: ListSummary

    public init(summary: ListSummary) { self.summary = summary }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> ListInfo {
        ListInfo(summary: try ListSummary.decode(from: &r))
    }

    public func encode(into w: inout WireWriter) { summary.encode(into: &w) }
}
