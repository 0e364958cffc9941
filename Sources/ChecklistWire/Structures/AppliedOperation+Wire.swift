import ChecklistModel

/// An **AppliedOp** (SPEC.md, CHANGE push; SNAPSHOT.md section 7: the same
/// bytes in the log).
extension AppliedOperation {
    /// Encodes a resolved operation: the PATCH opcode (Protocol/SPEC.md
    /// section 6.8; `TOGGLE` never occurs, toggles are stored resolved as
    /// `SET_CHECKED`), the item id as a plain `id`, then the operation's
    /// fields, field by field. Inlinable, as are `encodedBytes` and
    /// `write(into:)`: called from another module on an operation read
    /// from an array, an opaque method gets a copy of the operation
    /// (its texts retained and released around the call).
    @inlinable public func encode(into w: inout WireWriter) { write(to: &w) }

    /// Bytes of the encoding (`encode(into:)`, `write(into:)`).
    @inlinable public var encodedBytes: Int {
        switch self {
        case let .insert(id, index, fields):
            return 1 + WireSize.varint(id.rawValue) + WireSize.varint(index) + fields.encodedBytes
        case let .setText(id, text):
            return 1 + WireSize.varint(id.rawValue) + WireSize.string(text)
        case let .setChecked(id, _), let .setRemind(id, _):
            return 1 + WireSize.varint(id.rawValue) + 1
        case let .setDue(id, value), let .setPrice(id, value):
            return 1 + WireSize.varint(id.rawValue) + 1 + (value.map(WireSize.zigZag) ?? 0)
        case let .delete(id):
            return 1 + WireSize.varint(id.rawValue)
        case let .move(id, toIndex):
            return 1 + WireSize.varint(id.rawValue) + WireSize.varint(toIndex)
        case let .setKey(id, key):
            return 1 + WireSize.varint(id.rawValue) + 1 + (key.map(WireSize.string) ?? 0)
        }
    }

    /// Writes the encoding into reserved memory (`encodedBytes` of it):
    /// the bytes of `encode(into:)`, for a frame sized first (a CHANGE push).
    @inlinable @inline(__always) public func write(into c: inout WireCursor) { write(to: &c) }

    /// The one writer of the layout (a new field goes here and into
    /// `encodedBytes`).
    @inlinable @inline(__always)
    func write<Sink: WireSink>(to w: inout Sink) {
        switch self {
        case let .insert(id, index, fields):
            w.writeU8(PatchOpcode.insert.rawValue); w.writeVarint(id.rawValue); w.writeVarint(index)
            w.writeFields(fields)
        case let .setText(id, text):
            w.writeU8(PatchOpcode.setText.rawValue); w.writeVarint(id.rawValue); w.writeString(text)
        case let .setChecked(id, checked):
            w.writeU8(PatchOpcode.setChecked.rawValue); w.writeVarint(id.rawValue); w.writeFlag(checked)
        case let .setDue(id, due):
            w.writeU8(PatchOpcode.setDue.rawValue); w.writeVarint(id.rawValue)
            w.writeFlag(due != nil)
            if let due { w.writeZigZag(due) }
        case let .setRemind(id, remind):
            w.writeU8(PatchOpcode.setRemind.rawValue); w.writeVarint(id.rawValue); w.writeFlag(remind)
        case let .setPrice(id, price):
            w.writeU8(PatchOpcode.setPrice.rawValue); w.writeVarint(id.rawValue)
            w.writeFlag(price != nil)
            if let price { w.writeZigZag(price) }
        case let .delete(id):
            w.writeU8(PatchOpcode.delete.rawValue); w.writeVarint(id.rawValue)
        case let .move(id, toIndex):
            w.writeU8(PatchOpcode.move.rawValue); w.writeVarint(id.rawValue); w.writeVarint(toIndex)
        case let .setKey(id, key):
            w.writeU8(PatchOpcode.setKey.rawValue); w.writeVarint(id.rawValue)
            w.writeFlag(key != nil)
            if let key { w.writeString(key) }
        }
    }

    /// Decodes an operation written by `encode(into:)`.
    public static func decode(from r: inout WireReader) throws(ChecklistError) -> AppliedOperation {
        let raw = try r.readU8("opcode")
        guard let opcode = PatchOpcode(rawValue: raw), opcode != .toggle else {
            throw .badField("opcode", "unknown applied operation opcode \(raw)")
        }
        let id = ItemID(try r.readVarint("id"))
        switch opcode {
        case .insert:
            let index = try r.readVarint("index")
            return .insert(id: id, index: index, fields: try ItemFields.decode(from: &r))
        case .setText:
            return .setText(id, try r.readString("text"))
        case .setChecked:
            return .setChecked(id, try r.readBool("checked"))
        case .setDue:
            return .setDue(id, try r.readBool("present") ? try r.readZigZag("due") : nil)
        case .setRemind:
            return .setRemind(id, try r.readBool("remind"))
        case .setPrice:
            return .setPrice(id, try r.readBool("present") ? try r.readZigZag("price") : nil)
        case .delete:
            return .delete(id)
        case .move:
            return .move(id, toIndex: try r.readVarint("toIndex"))
        case .setKey:
            return .setKey(id, try r.readBool("present") ? try r.readString("clientKey") : nil)
        case .toggle:
            throw .badField("opcode", "TOGGLE is never stored")
        }
    }

    /// Whether `withoutClientKey` changes this operation (a client key to
    /// leave out, or a whole `SET_KEY`).
    @inlinable public var carriesClientKey: Bool {
        switch self {
        case let .insert(_, _, fields): return fields.clientKey != nil
        case .setKey: return true
        default: return false
        }
    }

    /// The operation as live sync carries it (Protocol/SPEC.md section
    /// 6.14): client keys do not travel there, so an insert loses its key
    /// and a `SET_KEY` is left out (nil).
    public var withoutClientKey: AppliedOperation? {
        switch self {
        case let .insert(id, index, fields) where fields.clientKey != nil:
            var bare = fields
            bare.clientKey = nil
            return .insert(id: id, index: index, fields: bare)
        case .setKey:
            return nil
        default:
            return self
        }
    }
}
