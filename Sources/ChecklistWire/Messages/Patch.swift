import ChecklistModel

/// PATCH (0x21): a batch of operations applied atomically to one list.
public struct Patch: WireMessage {
    public static let messageType = MessageType.patch
    static let hasBaseRevision: UInt8 = 1 << 0

    public var list: ListID
    public var baseRevision: Revision?
    public var ops: [PatchOperation]

    public init(list: ListID, baseRevision: Revision? = nil, ops: [PatchOperation]) {
        self.list = list
        self.baseRevision = baseRevision
        self.ops = ops
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> Patch {
        let list = ListID(try r.readVarint("list"))
        let presence = try r.readPresence(known: hasBaseRevision)
        let base = presence & hasBaseRevision != 0 ? try r.readVarint("baseRevision") : nil
        // Every operation takes at least 2 bytes: bounds a hostile count.
        let count = try r.readCount("ops", max: r.remaining / 2)
        var ops: [PatchOperation] = []
        ops.reserveCapacity(count)
        for _ in 0..<count { ops.append(try PatchOperation.decode(from: &r)) }
        return Patch(list: list, baseRevision: base, ops: ops)
    }

    public func encode(into w: inout WireWriter) {
        w.writeVarint(list.rawValue)
        w.writeU8(baseRevision != nil ? Self.hasBaseRevision : 0)
        if let baseRevision { w.writeVarint(baseRevision) }
        w.writeVarint(ops.count)
        for op in ops { op.encode(into: &w) }
    }
}
