/// The id an accepted PATCH gave to an inserted item that carried a
/// temporary reference: the store reports it in `PatchResult`, PATCH_OK
/// carries it to the client.
public struct TempRefAssignment: Hashable, Sendable {
    /// The client's temporary reference from the INSERT operation.
    public var tempRef: UInt64
    /// The server id the inserted item got.
    public var id: ItemID

    public init(tempRef: UInt64, id: ItemID) {
        self.tempRef = tempRef
        self.id = id
    }
}
