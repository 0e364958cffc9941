import ChecklistModel

/// The rows of one leaf that a page takes, lent as the leaf's columns: for
/// an encoder that writes rows in one tight loop, with no `RowView` (and no
/// call) per row. Valid only inside the `PageRows.forEachRun` visitor that
/// lends it.
///
/// Slots `start ..< end` are scanned; a slot's row belongs to the page when
/// `flags[slot] & mask == want` (the filter), and exactly `rows` of them do.
/// Row `slot`'s text is `text[textStart(slot) ..< textEnds[slot]]`; `dues`
/// and `prices` are read only where the flag bit says the row has one (they
/// are empty in a leaf where no row has one).
public struct RowColumns {
    /// The leaf's spelled-out ids; empty while the leaf holds its ids as a
    /// run (`LeafIDs`), then `id(_:)` counts from `firstRunID`.
    public let ids: UnsafeBufferPointer<UInt64>
    /// The first id of the leaf's run (when `ids` is empty).
    public let firstRunID: UInt64
    /// Each row's flag bits, as on the wire (never `hasKey`: keys are kept apart).
    public let flags: UnsafeBufferPointer<UInt8>
    public let textEnds: UnsafeBufferPointer<UInt32>
    public let text: UnsafeRawBufferPointer
    public let dues: UnsafeBufferPointer<Int64>
    public let prices: UnsafeBufferPointer<Int64>
    /// The first slot to scan.
    public let start: Int
    /// Rows of the page in this leaf.
    public let rows: Int
    /// The filter, as a test of the flags byte.
    public let mask: UInt8
    public let want: UInt8

    /// Row `slot`'s item id.
    @inlinable @inline(__always)
    public func id(_ slot: Int) -> UInt64 {
        ids.isEmpty ? firstRunID &+ UInt64(truncatingIfNeeded: slot) : ids[slot]
    }

    /// The first byte of row `slot`'s text in `text`.
    @inlinable @inline(__always)
    public func textStart(_ slot: Int) -> Int {
        slot == 0 ? 0 : Int(textEnds[slot &- 1])
    }
}

extension RowRun {
    /// Lends the run's columns to `body`.
    func withColumns(filter: RowFilter, _ body: (RowColumns) -> Void) {
        leaf.arena.withUnsafeBytes { text in
            leaf.ids.withSpelledIDs { ids, firstRunID in
                leaf.flags.withUnsafeBufferPointer { flags in
                    leaf.textEnds.withUnsafeBufferPointer { ends in
                        leaf.dues.withUnsafeBufferPointer { dues in
                            leaf.prices.withUnsafeBufferPointer { prices in
                                body(RowColumns(ids: ids, firstRunID: firstRunID, flags: flags, textEnds: ends, text: text, dues: dues, prices: prices,
                                                start: slot, rows: rows,
                                                mask: filter == .all ? 0 : ItemFlags.checked.rawValue,
                                                want: filter == .checked ? ItemFlags.checked.rawValue : 0))
                            }
                        }
                    }
                }
            }
        }
    }

    /// At least the text bytes of the run's rows: exact for `.all`; for a
    /// filter, the texts from `slot` to the leaf's end.
    func textBytesBound(filter: RowFilter) -> Int {
        let end = filter == .all ? slot + rows : leaf.count
        return leaf.textStart(end) - leaf.textStart(slot)
    }
}
