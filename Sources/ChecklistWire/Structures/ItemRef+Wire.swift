import ChecklistModel

extension ItemRef {
    /// Decodes an **ItemRef**: even `r` is item id `r >> 1`, odd `r` is
    /// temporary reference `r >> 1`.
    public static func decode(from r: inout WireReader) throws(ChecklistError) -> ItemRef {
        let v = try r.readVarint("ref")
        return v & 1 == 0 ? .id(ItemID(v >> 1)) : .temp(v >> 1)
    }

    public func encode(into w: inout WireWriter) {
        switch self {
        case .id(let id): w.writeVarint(id.rawValue << 1)
        case .temp(let t): w.writeVarint(t << 1 | 1)
        }
    }
}
