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
        w.writeVarint(list.rawValue)
        w.writeVarint(revision)
        w.writeVarint(ids.count)
        for a in ids {
            w.writeVarint(a.tempRef)
            w.writeVarint(a.id.rawValue)
        }
    }
}
