import ChecklistModel

extension PageHeader {
    /// Decodes the fields of a PAGE before its rows.
    public static func decode(from r: inout WireReader) throws(ChecklistError) -> PageHeader {
        let list = ListID(try r.readVarint("list"))
        let revision = try r.readVarint("revision")
        let total = try r.readVarint("total")
        let offset = try r.readVarint("offset")
        // A row takes at least 3 bytes (id, flags, text length).
        let count = try r.readCount("count", max: r.remaining / 3)
        return PageHeader(list: list, revision: revision, total: total, offset: offset, count: count)
    }

    /// Encodes the fields of a PAGE before its rows.
    public func encode(into w: inout WireWriter) {
        w.writeVarint(list.rawValue)
        w.writeVarint(revision)
        w.writeVarint(total)
        w.writeVarint(offset)
        w.writeVarint(count)
    }
}
