import ChecklistModel

/// PATCH (0x21): a batch of operations applied atomically to one list.
public struct Patch: WireMessage {
    public static let messageType = MessageType.patch
    static let hasBaseRevision: UInt8 = 1 << 0
    static let hasIdempotencyKey: UInt8 = 1 << 1

    public var list: ListID
    public var baseRevision: Revision?
    /// Makes a retry of this patch take effect once (Protocol/SPEC.md section 9).
    public var idempotencyKey: IdempotencyKey?
    public var ops: [PatchOperation]

    public init(list: ListID, baseRevision: Revision? = nil, idempotencyKey: IdempotencyKey? = nil, ops: [PatchOperation]) {
        self.list = list
        self.baseRevision = baseRevision
        self.idempotencyKey = idempotencyKey
        self.ops = ops
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> Patch {
        let list = ListID(try r.readVarint("list"))
        let presence = try r.readPresence(known: hasBaseRevision | hasIdempotencyKey)
        let base = presence & hasBaseRevision != 0 ? try r.readVarint("baseRevision") : nil
        var key: IdempotencyKey?
        if presence & hasIdempotencyKey != 0 {
            key = IdempotencyKey(client: try r.readVarint("client"), sequence: try r.readVarint("sequence"))
        }
        // Every operation takes at least 2 bytes: bounds a hostile count.
        let count = try r.readCount("ops", max: r.remaining / 2)
        var ops: [PatchOperation] = []
        ops.reserveCapacity(count)
        for _ in 0..<count { ops.append(try PatchOperation.decode(from: &r)) }
        return Patch(list: list, baseRevision: base, idempotencyKey: key, ops: ops)
    }

    public func encode(into w: inout WireWriter) {
        w.writeVarint(list.rawValue)
        w.writeU8((baseRevision != nil ? Self.hasBaseRevision : 0) | (idempotencyKey != nil ? Self.hasIdempotencyKey : 0))
        if let baseRevision { w.writeVarint(baseRevision) }
        if let idempotencyKey {
            w.writeVarint(idempotencyKey.client)
            w.writeVarint(idempotencyKey.sequence)
        }
        w.writeVarint(ops.count)
        for op in ops { op.encode(into: &w) }
    }
}
