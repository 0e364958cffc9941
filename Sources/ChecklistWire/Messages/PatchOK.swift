import ChecklistModel

/// PATCH_OK (0xA1): the new revision and the ids given to temporary references.
public struct PatchOK: WireMessage {
    public static let messageType = MessageType.patchOK

    /// One temporary reference and the server id it became (the store's
    /// `PatchResult.Assignment` too).
    public typealias Assignment = TempRefAssignment

    public var list: ListID
    public var revision: Revision
    public var ids: [Assignment]

    public init(list: ListID, revision: Revision, ids: [Assignment] = []) {
        self.list = list
        self.revision = revision
        self.ids = ids
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> PatchOK {
        let list = ListID(try r.readVarint("list"))
        let revision = try r.readVarint("revision")
        let count = try r.readCount("count", max: r.remaining / 2)
        var ids: [Assignment] = []
        ids.reserveCapacity(count)
        for _ in 0..<count {
            ids.append(Assignment(tempRef: try r.readVarint("tempRef"), id: ItemID(try r.readVarint("id"))))
        }
        return PatchOK(list: list, revision: revision, ids: ids)
    }

    public func encode(into w: inout WireWriter) {
        let count = encodedBytes
        w.reserveForAppending(count)  // many answers in a row
        w.writeReserved(count: count) { write(into: &$0) }
    }

    /// Bytes of the body (`write(into:)`, `encode(into:)`).
    public var encodedBytes: Int {
        var count = WireSize.varint(list.rawValue) + WireSize.varint(revision) + WireSize.varint(UInt64(ids.count))
        for a in ids { count += WireSize.varint(a.tempRef) + WireSize.varint(a.id.rawValue) }
        return count
    }

    /// Writes the body into reserved memory (`encodedBytes` of it): the
    /// one writer of its layout, so that a server frames a PATCH_OK in one
    /// reservation (`FrameEncoder.append(type:requestID:bodyBytes:to:body:)`).
    public func write(into c: inout WireCursor) {
        c.writeVarint(list.rawValue)
        c.writeVarint(revision)
        c.writeVarint(UInt64(ids.count))
        for a in ids {
            c.writeVarint(a.tempRef)
            c.writeVarint(a.id.rawValue)
        }
    }
}
