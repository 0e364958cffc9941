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

    /// Bytes of the fields before the rows.
    @inlinable public var encodedBytes: Int {
        WireSize.varint(list.rawValue) + WireSize.varint(revision) + WireSize.varint(total) + WireSize.varint(offset)
            + WireSize.varint(UInt64(count))
    }

    /// Writes the fields before the rows into reserved memory (`encodedBytes` of them).
    @inlinable public func write(into c: inout WireCursor) {
        c.writeVarint(list.rawValue)
        c.writeVarint(revision)
        c.writeVarint(total)
        c.writeVarint(offset)
        c.writeVarint(UInt64(count))
    }
}
