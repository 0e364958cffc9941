import ChecklistModel

/// One reusable row buffer of a `PagingCursor`: what a table view's cell is
/// to its rows. The cursor refills it in place as rows scroll in and out;
/// its text storage keeps its capacity, so refilling allocates nothing once
/// the buffer has held a text as long.
public struct RowSlot: Sendable {
    /// The filtered row index this buffer holds, or -1 when empty.
    public internal(set) var index: Int = -1
    public internal(set) var id = ItemID(0)
    public internal(set) var checked = false
    public internal(set) var remind = false
    public internal(set) var due: Int64?
    public internal(set) var price: Int64?
    /// The text's UTF-8 bytes (valid UTF-8: the codec checked it).
    public internal(set) var textBytes: [UInt8] = []

    /// The text as a String (this allocates; UIs that can draw UTF-8 bytes
    /// should use `textBytes`).
    public var text: String { String(decoding: textBytes, as: UTF8.self) }

    init(reserving textCapacity: Int) {
        textBytes.reserveCapacity(textCapacity)
    }
}
