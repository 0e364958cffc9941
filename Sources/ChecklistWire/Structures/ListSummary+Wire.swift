import ChecklistModel

extension ListSummary {
    /// Decodes a **ListSummary** (Protocol/SPEC.md section 6).
    public static func decode(from r: inout WireReader) throws(ChecklistError) -> ListSummary {
        ListSummary(id: ListID(try r.readVarint("id")),
                    name: try r.readString("name"),
                    icon: try r.readString("icon"),
                    itemCount: try r.readVarint("itemCount"),
                    uncheckedCount: try r.readVarint("uncheckedCount"),
                    revision: try r.readVarint("revision"))
    }

    public func encode(into w: inout WireWriter) {
        w.writeVarint(id.rawValue)
        w.writeString(name)
        w.writeString(icon)
        w.writeVarint(itemCount)
        w.writeVarint(uncheckedCount)
        w.writeVarint(revision)
    }
}
