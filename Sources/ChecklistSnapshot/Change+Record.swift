import ChecklistModel
import ChecklistWire

/// The kinds of a `Change` as they are stored (Protocol/SNAPSHOT.md section 7).
public enum ChangeKindCode: UInt8, Sendable {
    case listCreated = 0x01
    case listUpdated = 0x02
    case listDeleted = 0x03
    case patched = 0x04
    case listImported = 0x05
}

extension Change {
    /// Encodes the change as a **Change** record body: kind, namespace, list,
    /// revision, then the kind's fields (Protocol/SNAPSHOT.md section 7).
    /// Pure: appends to `w`, no I/O.
    public func encode(into w: inout WireWriter) {
        encodeFields(into: &w)
        encodeKey(into: &w)
    }

    /// The optional trailing field: the PATCH's idempotency key, so that a
    /// restarted server still answers a retried patch without applying it.
    package func encodeKey(into w: inout WireWriter) {
        Self.writeKey(idempotencyKey, to: &w)
    }

    /// What `encodeKey(into:)` writes for a change whose key is `key`
    /// (`keyBytes(_:)` of them), into a writer or reserved memory.
    package static func writeKey<Sink: WireSink>(_ key: IdempotencyKey?, to w: inout Sink) {
        if let key {
            w.writeVarint(key.client)
            w.writeVarint(key.sequence)
        }
    }

    /// What `encodeFields` writes for a patch of `ops` to `list` in
    /// `namespace` at `revision`, given field by field: a caller that reads
    /// them in place (from an array) copies no change.
    package static func encodePatchFields(namespace: Namespace, list: ListID, revision: Revision, ops: [AppliedOperation],
                                          into w: inout WireWriter) {
        let count = patchFieldBytes(namespace: namespace, list: list, revision: revision, ops: ops)
        w.reserveForAppending(count)
        w.writeReserved(count: count) { writePatchFields(namespace: namespace, list: list, revision: revision, ops: ops, into: &$0) }
    }

    /// Bytes `encodePatchFields` writes.
    package static func patchFieldBytes(namespace: Namespace, list: ListID, revision: Revision, ops: [AppliedOperation]) -> Int {
        var count = 1 + WireSize.string(namespace.rawValue) + WireSize.varint(list.rawValue) + WireSize.varint(revision)
            + WireSize.varint(UInt64(ops.count))
        for i in ops.indices { count += ops[i].encodedBytes }
        return count
    }

    /// What `encodePatchFields` writes, into memory reserved for its
    /// `patchFieldBytes`: sized first, a record is written with one check
    /// of the array's capacity, not one a byte.
    package static func writePatchFields(namespace: Namespace, list: ListID, revision: Revision, ops: [AppliedOperation],
                                         into c: inout WireCursor) {
        c.writeU8(ChangeKindCode.patched.rawValue)
        c.writeString(namespace.rawValue)
        c.writeVarint(list.rawValue)
        c.writeVarint(revision)
        c.writeVarint(UInt64(ops.count))
        for i in ops.indices { ops[i].write(into: &c) }
    }

    /// Bytes `writeKey(_:to:)` writes.
    package static func keyBytes(_ key: IdempotencyKey?) -> Int {
        key.map { WireSize.varint($0.client) + WireSize.varint($0.sequence) } ?? 0
    }

    /// Encodes everything but the idempotency key. An imported list's items
    /// can be handed over in pieces: `drain` is called between items
    /// whenever `w` holds `drainAt` bytes or more, and takes (and empties)
    /// what `w` holds, so a 10M-item list is never one buffer.
    package func encodeFields(into w: inout WireWriter, drainAt: Int = .max, drain: (inout WireWriter) -> Void = { _ in }) {
        switch kind {
        case .patched(let ops):
            Self.encodePatchFields(namespace: namespace, list: list, revision: revision, ops: ops, into: &w)
        case let .listCreated(name, icon):
            encodeHead(.listCreated, into: &w)
            w.writeString(name)
            w.writeString(icon)
        case let .listUpdated(name, icon):
            encodeHead(.listUpdated, into: &w)
            w.writeString(name)
            w.writeString(icon)
        case .listDeleted:
            encodeHead(.listDeleted, into: &w)
        case let .listImported(list):
            encodeHead(.listImported, into: &w)
            w.writeString(list.name)
            w.writeString(list.icon)
            w.writeVarint(list.nextItemID.rawValue)
            w.writeVarint(UInt64(list.items.count))
            list.items.forEachView { item in
                w.writeVarint(item.id.rawValue)
                ItemFields.encode(checked: item.checked, remind: item.remind, due: item.due, price: item.price,
                                  clientKey: item.clientKey, into: &w) { w in
                    w.writeBytes(item.text)
                }
                if w.count >= drainAt { drain(&w) }
            }
        }
    }

    /// The fields every kind but a patch starts with (a patch's:
    /// `encodePatchFields`): kind, namespace, list, revision.
    private func encodeHead(_ code: ChangeKindCode, into w: inout WireWriter) {
        w.writeU8(code.rawValue)
        w.writeString(namespace.rawValue)
        w.writeVarint(list.rawValue)
        w.writeVarint(revision)
    }

    /// Decodes a **Change** written by `encode(into:)`. Throws `BAD_FIELD`
    /// naming the field on short or invalid input; never traps.
    public static func decode(from r: inout WireReader) throws(ChecklistError) -> Change {
        var change = try decodeFields(from: &r)
        if r.remaining > 0 { change.idempotencyKey = try decodeKey(from: &r) }
        return change
    }

    /// Reads the idempotency key written by `encodeKey`.
    package static func decodeKey(from r: inout WireReader) throws(ChecklistError) -> IdempotencyKey {
        IdempotencyKey(client: try r.readVarint("client"), sequence: try r.readVarint("sequence"))
    }

    /// Decodes what `encodeFields` wrote (no idempotency key).
    package static func decodeFields(from r: inout WireReader) throws(ChecklistError) -> Change {
        let raw = try r.readU8("kind")
        guard let code = ChangeKindCode(rawValue: raw) else {
            throw .badField("kind", "unknown change kind \(raw)")
        }
        let namespace = Namespace(try r.readString("namespace"))
        let list = ListID(try r.readVarint("list"))
        let revision = try r.readVarint("revision")
        let kind: Kind
        switch code {
        case .listCreated:
            kind = .listCreated(name: try r.readString("name"), icon: try r.readString("icon"))
        case .listUpdated:
            kind = .listUpdated(name: try r.readString("name"), icon: try r.readString("icon"))
        case .listDeleted:
            kind = .listDeleted
        case .patched:
            // Every operation takes at least 2 bytes: never reserve more than
            // the input can hold.
            let count = try r.readCount("count", max: r.remaining / 2)
            var ops: [AppliedOperation] = []
            ops.reserveCapacity(count)
            for _ in 0..<count { ops.append(try AppliedOperation.decode(from: &r)) }
            kind = .patched(ops)
        case .listImported:
            let name = try r.readString("name")
            let icon = try r.readString("icon")
            let nextItemID = ItemID(try r.readVarint("nextItemID"))
            // Every item takes at least 3 bytes (id, flags, text length).
            let count = try r.readCount("count", max: r.remaining / 3)
            var items: [Item] = []
            items.reserveCapacity(count)
            for _ in 0..<count {
                items.append(Item(id: ItemID(try r.readVarint("id")), fields: try ItemFields.decode(from: &r)))
            }
            kind = .listImported(ImportedList(name: name, icon: icon, nextItemID: nextItemID, items: ImportedItems(items)))
        }
        return Change(namespace: namespace, list: list, revision: revision, kind: kind)
    }
}
