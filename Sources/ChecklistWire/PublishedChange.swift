import ChecklistModel

/// A committed change made ready for live sync, not yet encoded: the
/// **ListChange** it travels as (`omitted` when it would not fit in a
/// CHANGES answer) and that encoding's size. Sizing is cheap; encoding
/// allocates the frame and writes every operation. The change feed keeps
/// small changes in this form and encodes one only when it is read
/// (SUBSCRIBE catch-up, CHANGES_SINCE); a change that goes to subscribers
/// is encoded once, at its publish (`EncodedChange.init(_:)`).
package struct PublishedChange: Sendable {
    package let list: ListID
    package let namespace: Namespace
    package let revision: Revision
    package let isDeletion: Bool
    /// The list's history starts over at this change (`EncodedChange.startsHistory`).
    package let startsHistory: Bool
    /// What the CHANGE push carries.
    package let wire: ListChange
    /// Bytes of `wire`'s encoding.
    package let bodyBytes: Int

    /// `change` as live sync sends it. A patch whose **ListChange** would
    /// not fit in a CHANGES answer of at most `maxFrameBytes` is sent as
    /// `omitted`.
    package init(_ change: Change, maxFrameBytes: UInt32) {
        list = change.list
        namespace = change.namespace
        revision = change.revision
        isDeletion = change.isDeletion
        startsHistory = change.startsHistory
        (wire, bodyBytes) = Self.wire(of: change, maxFrameBytes: maxFrameBytes)
    }

    /// The **ListChange** `change` travels as, and its size: `omitted` for
    /// a patch that would not fit in a CHANGES answer of at most
    /// `maxFrameBytes`.
    package static func wire(of change: Change, maxFrameBytes: UInt32) -> (wire: ListChange, bodyBytes: Int) {
        var wire = ListChange(change)
        var bodyBytes = wire.encodedBytes
        if bodyBytes > Changes.maxChangesBytes(maxFrameBytes: maxFrameBytes) {
            wire = ListChange(list: wire.list, revision: wire.revision, kind: .omitted)
            bodyBytes = wire.encodedBytes
        }
        return (wire, bodyBytes)
    }

    /// The size of the **ListChange** `change` travels as
    /// (`wire(of:maxFrameBytes:)`), without making it when it is a patch
    /// whose operations go as they are (no client key to leave out).
    package static func bodyBytes(of change: Change, maxFrameBytes: UInt32) -> Int {
        if case .patched(let ops) = change.kind,
           let count = plainPatchBytes(list: change.list, revision: change.revision, ops: ops, maxFrameBytes: maxFrameBytes) {
            return count
        }
        return wire(of: change, maxFrameBytes: maxFrameBytes).bodyBytes
    }

    /// `bodyBytes(of:maxFrameBytes:)` of a patch of `ops` to `list` at
    /// `revision` that travels as it is; nil when it does not (an operation
    /// carries a client key to leave out, or it is sent `omitted`).
    package static func plainPatchBytes(list: ListID, revision: Revision, ops: [AppliedOperation],
                                        maxFrameBytes: UInt32) -> Int? {
        guard !ops.contains(where: \.carriesClientKey) else { return nil }
        let count = ListChange.patchBytes(list: list, revision: revision, ops: ops)
        return count <= Changes.maxChangesBytes(maxFrameBytes: maxFrameBytes) ? count : nil
    }

    /// Bytes of the CHANGE push frame, header included.
    package var frameBytes: Int { FrameHeader.size + bodyBytes }
}

// Inlinable: read on a change in place in an array from another module
// (the hub's publish), an opaque getter would get a copy of the change.
extension Change {
    /// The list is gone with this change (its history with it).
    @inlinable package var isDeletion: Bool {
        if case .listDeleted = kind { true } else { false }
    }

    /// The list's history starts over at this change (`EncodedChange.startsHistory`).
    @inlinable package var startsHistory: Bool {
        if case .listImported = kind { true } else { false }
    }
}
