import ChecklistModel

/// The opcodes of PATCH operations (Protocol/SPEC.md section 6.8).
public enum PatchOpcode: UInt8, Sendable {
    case insert = 0x01
    case setText = 0x02
    case setChecked = 0x03
    case toggle = 0x04
    case setDue = 0x05
    case setRemind = 0x06
    case setPrice = 0x07
    case delete = 0x08
    case move = 0x09
    case setKey = 0x0A
}

extension PatchOperation {
    public static func decode(from r: inout WireReader) throws(ChecklistError) -> PatchOperation {
        let raw = try r.readU8("opcode")
        guard let opcode = PatchOpcode(rawValue: raw) else {
            throw .badField("opcode", "unknown operation opcode \(raw)")
        }
        switch opcode {
        case .insert:
            let temp = try r.readVarint("tempRef")
            let kind = try r.readU8("where")
            let position: InsertPosition
            switch kind {
            case 0: position = .index(try r.readVarint("index"))
            case 1: position = .after(try ItemRef.decode(from: &r))
            case 2: position = .end
            default: throw .badField("where", "where must be 0, 1 or 2, got \(kind)")
            }
            return .insert(tempRef: temp == 0 ? nil : temp, position: position, fields: try ItemFields.decode(from: &r))
        case .setText:
            return .setText(try ItemRef.decode(from: &r), try r.readString("text"))
        case .setChecked:
            return .setChecked(try ItemRef.decode(from: &r), try r.readBool("checked"))
        case .toggle:
            return .toggle(try ItemRef.decode(from: &r))
        case .setDue:
            let ref = try ItemRef.decode(from: &r)
            return .setDue(ref, try r.readBool("present") ? try r.readZigZag("due") : nil)
        case .setRemind:
            return .setRemind(try ItemRef.decode(from: &r), try r.readBool("remind"))
        case .setPrice:
            let ref = try ItemRef.decode(from: &r)
            return .setPrice(ref, try r.readBool("present") ? try r.readZigZag("price") : nil)
        case .delete:
            return .delete(try ItemRef.decode(from: &r))
        case .move:
            let ref = try ItemRef.decode(from: &r)
            return .move(ref, toIndex: try r.readVarint("toIndex"))
        case .setKey:
            let ref = try ItemRef.decode(from: &r)
            return .setKey(ref, try r.readBool("present") ? try r.readString("clientKey") : nil)
        }
    }

    public func encode(into w: inout WireWriter) {
        switch self {
        case let .insert(tempRef, position, fields):
            w.writeU8(PatchOpcode.insert.rawValue)
            w.writeVarint(tempRef ?? 0)
            switch position {
            case .index(let i): w.writeU8(0); w.writeVarint(i)
            case .after(let ref): w.writeU8(1); ref.encode(into: &w)
            case .end: w.writeU8(2)
            }
            fields.encode(into: &w)
        case let .setText(ref, text):
            w.writeU8(PatchOpcode.setText.rawValue); ref.encode(into: &w); w.writeString(text)
        case let .setChecked(ref, checked):
            w.writeU8(PatchOpcode.setChecked.rawValue); ref.encode(into: &w); w.writeBool(checked)
        case let .toggle(ref):
            w.writeU8(PatchOpcode.toggle.rawValue); ref.encode(into: &w)
        case let .setDue(ref, due):
            w.writeU8(PatchOpcode.setDue.rawValue); ref.encode(into: &w)
            w.writeBool(due != nil)
            if let due { w.writeZigZag(due) }
        case let .setRemind(ref, remind):
            w.writeU8(PatchOpcode.setRemind.rawValue); ref.encode(into: &w); w.writeBool(remind)
        case let .setPrice(ref, price):
            w.writeU8(PatchOpcode.setPrice.rawValue); ref.encode(into: &w)
            w.writeBool(price != nil)
            if let price { w.writeZigZag(price) }
        case let .delete(ref):
            w.writeU8(PatchOpcode.delete.rawValue); ref.encode(into: &w)
        case let .move(ref, toIndex):
            w.writeU8(PatchOpcode.move.rawValue); ref.encode(into: &w); w.writeVarint(toIndex)
        case let .setKey(ref, key):
            w.writeU8(PatchOpcode.setKey.rawValue); ref.encode(into: &w)
            w.writeBool(key != nil)
            if let key { w.writeString(key) }
        }
    }
}
