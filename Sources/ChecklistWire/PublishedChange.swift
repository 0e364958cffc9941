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
        isDeletion = if case .listDeleted = change.kind { true } else { false }
        startsHistory = if case .listImported = change.kind { true } else { false }
        var wire = ListChange(change)
        var bodyBytes = wire.encodedBytes
        if bodyBytes > Changes.maxChangesBytes(maxFrameBytes: maxFrameBytes) {
            wire = ListChange(list: wire.list, revision: wire.revision, kind: .omitted)
            bodyBytes = wire.encodedBytes
        }
        self.wire = wire
        self.bodyBytes = bodyBytes
    }

    /// Bytes of the CHANGE push frame, header included.
    package var frameBytes: Int { FrameHeader.size + bodyBytes }
}
