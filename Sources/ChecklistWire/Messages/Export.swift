import ChecklistModel

/// EXPORT (0x40): streams a snapshot (Protocol/SNAPSHOT.md) of the
/// connection's lists to the client, one EXPORT_CHUNK per request: START
/// answers the first chunk, each NEXT the following one (Protocol/SPEC.md
/// section 6.16).
public struct Export: WireMessage {
    public static let messageType = MessageType.export

    /// The `action` byte and its fields.
    public enum Action: Hashable, Sendable {
        /// Starts an export of `lists` (every list of the namespace when
        /// empty), in chunks of at most `chunkBytes` data bytes (0: the
        /// server's size).
        case start(chunkBytes: UInt64, lists: [ListID])
        /// Asks for chunk `sequence` (1 for the first after START's).
        case next(sequence: UInt64)
        /// Ends the running export early.
        case cancel
    }

    public var action: Action

    public init(_ action: Action) {
        self.action = action
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> Export {
        let action = try r.readU8("action")
        switch action {
        case 0:
            let chunkBytes = try r.readVarint("chunkBytes")
            let count = try r.readCount("count", max: r.remaining)
            var lists: [ListID] = []
            lists.reserveCapacity(count)
            for _ in 0..<count { lists.append(ListID(try r.readVarint("list"))) }
            return Export(.start(chunkBytes: chunkBytes, lists: lists))
        case 1:
            return Export(.next(sequence: try r.readVarint("sequence")))
        case 2:
            return Export(.cancel)
        default:
            throw .badField("action", "EXPORT action must be 0, 1 or 2, got \(action)")
        }
    }

    public func encode(into w: inout WireWriter) {
        switch action {
        case .start(let chunkBytes, let lists):
            w.writeU8(0)
            w.writeVarint(chunkBytes)
            w.writeVarint(lists.count)
            for list in lists { w.writeVarint(list.rawValue) }
        case .next(let sequence):
            w.writeU8(1)
            w.writeVarint(sequence)
        case .cancel:
            w.writeU8(2)
        }
    }
}
