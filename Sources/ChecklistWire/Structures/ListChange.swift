import ChecklistModel

/// One committed change of one list as live sync carries it
/// (**ListChange**, Protocol/SPEC.md section 6): the body of a CHANGE push
/// and each element of a CHANGES answer.
public struct ListChange: Hashable, Sendable {
    /// The `kind` byte and what follows it.
    public enum Kind: Hashable, Sendable {
        case listCreated(name: String, icon: String)
        case listUpdated(name: String, icon: String)
        case listDeleted
        /// The operations as the server applied them, in order.
        case patched([AppliedOperation])
        /// A patch whose operations do not fit in one frame: the list is now
        /// at `revision`, and the client reads it again to learn how.
        case omitted
    }

    /// The `kind` codes.
    public enum KindCode: UInt8, Sendable {
        case listCreated = 0x01
        case listUpdated = 0x02
        case listDeleted = 0x03
        case patched = 0x04
        case omitted = 0x05
    }

    public var list: ListID
    /// The list's revision after this change.
    public var revision: Revision
    public var kind: Kind

    public init(list: ListID, revision: Revision, kind: Kind) {
        self.list = list
        self.revision = revision
        self.kind = kind
    }

    /// The wire form of a committed `Change` (its namespace and idempotency
    /// key do not travel).
    public init(_ change: Change) {
        let kind: Kind
        switch change.kind {
        case let .listCreated(name, icon): kind = .listCreated(name: name, icon: icon)
        case let .listUpdated(name, icon): kind = .listUpdated(name: name, icon: icon)
        case .listDeleted: kind = .listDeleted
        // Client keys stay out of live sync (Protocol/SPEC.md section 6.14).
        // (The operations as they are, shared, when none carries a key: most patches.)
        case .patched(let ops):
            kind = .patched(ops.contains(where: \.carriesClientKey) ? ops.compactMap(\.withoutClientKey) : ops)
        // A list set whole by an import: the client reads it again.
        case .listImported: kind = .omitted
        }
        self.init(list: change.list, revision: change.revision, kind: kind)
    }

    /// The smallest encoding: `list`, `revision` and `kind`, one byte each.
    public static let minimumBytes = 3

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> ListChange {
        let list = ListID(try r.readVarint("list"))
        let revision = try r.readVarint("revision")
        let raw = try r.readU8("kind")
        guard let code = KindCode(rawValue: raw) else { throw .badField("kind", "unknown change kind \(raw)") }
        switch code {
        case .listCreated:
            return ListChange(list: list, revision: revision, kind: .listCreated(name: try r.readString("name"), icon: try r.readString("icon")))
        case .listUpdated:
            return ListChange(list: list, revision: revision, kind: .listUpdated(name: try r.readString("name"), icon: try r.readString("icon")))
        case .listDeleted:
            return ListChange(list: list, revision: revision, kind: .listDeleted)
        case .patched:
            let count = try r.readCount("ops", max: r.remaining / Self.minimumOperationBytes)
            var ops: [AppliedOperation] = []
            ops.reserveCapacity(count)
            for _ in 0..<count { ops.append(try Self.decodeOperation(from: &r)) }
            return ListChange(list: list, revision: revision, kind: .patched(ops))
        case .omitted:
            return ListChange(list: list, revision: revision, kind: .omitted)
        }
    }

    /// Appends the encoding, written in one reservation (`write(into:)`).
    public func encode(into w: inout WireWriter) {
        let count = encodedBytes
        w.reserveForAppending(count)  // many changes in a row (a CHANGES answer)
        w.writeReserved(count: count) { write(into: &$0) }
    }

    /// Bytes of the encoding (`encode(into:)`, `write(into:)`).
    public var encodedBytes: Int {
        let head = WireSize.varint(list.rawValue) + WireSize.varint(revision) + 1
        switch kind {
        case let .listCreated(name, icon), let .listUpdated(name, icon):
            return head + WireSize.string(name) + WireSize.string(icon)
        case .listDeleted, .omitted:
            return head
        case .patched(let ops):
            return Self.patchBytes(list: list, revision: revision, ops: ops)
        }
    }

    /// Bytes of a `patched` change's encoding.
    public static func patchBytes(list: ListID, revision: Revision, ops: [AppliedOperation]) -> Int {
        var count = WireSize.varint(list.rawValue) + WireSize.varint(revision) + 1 + WireSize.varint(UInt64(ops.count))
        for i in ops.indices { count += ops[i].encodedBytes }
        return count
    }

    /// Writes the encoding into reserved memory (`encodedBytes` of it):
    /// the one writer of the **ListChange** layout.
    public func write(into c: inout WireCursor) {
        c.writeVarint(list.rawValue)
        c.writeVarint(revision)
        switch kind {
        case let .listCreated(name, icon):
            c.writeU8(KindCode.listCreated.rawValue); c.writeString(name); c.writeString(icon)
        case let .listUpdated(name, icon):
            c.writeU8(KindCode.listUpdated.rawValue); c.writeString(name); c.writeString(icon)
        case .listDeleted:
            c.writeU8(KindCode.listDeleted.rawValue)
        case .patched(let ops):
            c.writeU8(KindCode.patched.rawValue)
            c.writeVarint(UInt64(ops.count))
            for op in ops { op.write(into: &c) }
        case .omitted:
            c.writeU8(KindCode.omitted.rawValue)
        }
    }

    // MARK: AppliedOp

    /// An **AppliedOp** takes at least 2 bytes: opcode and item id.
    public static let minimumOperationBytes = 2

    /// Encodes an **AppliedOp**: the PATCH opcode (never `TOGGLE`: toggles
    /// travel resolved as `SET_CHECKED`), the item id as a plain `id`, then
    /// the fields; an `INSERT` has the row index it landed at.
    public static func encode(_ op: AppliedOperation, into w: inout WireWriter) {
        op.encode(into: &w)
    }

    /// Decodes an **AppliedOp**; `TOGGLE` and unknown opcodes are `BAD_FIELD opcode`.
    public static func decodeOperation(from r: inout WireReader) throws(ChecklistError) -> AppliedOperation {
        try AppliedOperation.decode(from: &r)
    }
}
