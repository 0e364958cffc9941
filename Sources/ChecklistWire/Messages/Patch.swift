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

    /// A PATCH whose operations were appended to an array shared with
    /// others (`decode(from:appendingOperationsTo:)`): its other fields,
    /// and where its operations lie in that array. Plain values only, so
    /// a server stages one without a reference to hold or drop.
    public struct Head: Hashable, Sendable {
        public var list: ListID
        public var baseRevision: Revision?
        public var idempotencyKey: IdempotencyKey?
        /// Where the operations lie in the shared array.
        public var ops: Range<Int>

        public init(list: ListID, baseRevision: Revision?, idempotencyKey: IdempotencyKey?, ops: Range<Int>) {
            self.list = list
            self.baseRevision = baseRevision
            self.idempotencyKey = idempotencyKey
            self.ops = ops
        }
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> Patch {
        var ops: [PatchOperation] = []
        let head = try decode(from: &r, appendingOperationsTo: &ops)
        return Patch(list: head.list, baseRevision: head.baseRevision, idempotencyKey: head.idempotencyKey, ops: ops)
    }

    /// Decodes a PATCH as `decode(from:)` does (the same checks, the same
    /// errors), appending its operations to `operations` instead of an
    /// array of its own: a server stages a read's PATCHes with all their
    /// operations in one array. Returns the message's other fields and
    /// where its operations lie in `operations`. On a throw `operations`
    /// is as it was.
    public static func decode(from r: inout WireReader, appendingOperationsTo operations: inout [PatchOperation])
        throws(ChecklistError) -> Head {
        let list = ListID(try r.readVarint("list"))
        let presence = try r.readPresence(known: hasBaseRevision | hasIdempotencyKey)
        let base = presence & hasBaseRevision != 0 ? try r.readVarint("baseRevision") : nil
        var key: IdempotencyKey?
        if presence & hasIdempotencyKey != 0 {
            key = IdempotencyKey(client: try r.readVarint("client"), sequence: try r.readVarint("sequence"))
        }
        // Every operation takes at least 2 bytes: bounds a hostile count.
        let count = try r.readCount("ops", max: r.remaining / 2)
        let start = operations.count
        if operations.isEmpty { operations.reserveCapacity(count) }
        do throws(ChecklistError) {
            for _ in 0..<count { operations.append(try PatchOperation.decode(from: &r)) }
        } catch {
            operations.removeSubrange(start...)
            throw error
        }
        return Head(list: list, baseRevision: base, idempotencyKey: key, ops: start..<operations.count)
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
