import ChecklistModel

/// A committed change encoded once for live sync (the server) and for
/// changes read back from a database (the storage): the whole CHANGE push
/// frame (request id 0, never compressed), shared by every subscriber it is
/// pushed to, by the change feed that retains it, by the catch-up of a
/// SUBSCRIBE and by CHANGES answers (which copy its **ListChange** body).
package struct EncodedChange: Sendable {
    package let list: ListID
    package let namespace: Namespace
    package let revision: Revision
    package let isDeletion: Bool
    /// The list's history starts over at this change: an import created or
    /// replaced the list whole (Protocol/SPEC.md section 6.13), so the
    /// changes before it no longer lead to what the list holds.
    package let startsHistory: Bool
    /// The frame: 10 header bytes, then the **ListChange**.
    package let frame: [UInt8]

    /// A change encoded earlier (the `ChangeFeed` giving back what it retained).
    package init(list: ListID, namespace: Namespace, revision: Revision, frame: [UInt8]) {
        self.list = list
        self.namespace = namespace
        self.revision = revision
        isDeletion = false
        startsHistory = false
        self.frame = frame
    }

    /// Encodes `change`. A patch whose **ListChange** would not fit in a
    /// CHANGES answer of at most `maxFrameBytes` is sent as `omitted`.
    package init(_ change: Change, maxFrameBytes: UInt32) {
        self.init(PublishedChange(change, maxFrameBytes: maxFrameBytes))
    }

    /// Encodes `change`.
    package init(_ change: PublishedChange) {
        self.init(namespace: change.namespace, wire: change.wire, bodyBytes: change.bodyBytes,
                  isDeletion: change.isDeletion, startsHistory: change.startsHistory)
    }

    /// Encodes `wire`, `bodyBytes` long (`ListChange.encodedBytes`), a
    /// change of a list of `namespace`: the frame is written once into an
    /// array of exactly its size.
    package init(namespace: Namespace, wire: ListChange, bodyBytes: Int, isDeletion: Bool = false, startsHistory: Bool = false) {
        list = wire.list
        self.namespace = namespace
        revision = wire.revision
        self.isDeletion = isDeletion
        self.startsHistory = startsHistory
        frame = FrameEncoder.frame(type: ChangePush.messageType, requestID: FrameHeader.pushRequestID,
                                   bodyBytes: bodyBytes) { wire.write(into: &$0) }
    }

    /// The **ListChange** bytes.
    package var body: ArraySlice<UInt8> { frame[FrameHeader.size...] }
}
