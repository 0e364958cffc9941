import ChecklistModel
import ChecklistStore
import ChecklistWire

/// Encodes a PAGE body from the rows `Store.pageRows` resolved, in one pass:
/// text bytes go from the shared leaves into the output buffer, with no
/// Item or String in between.
///
/// The body is written into memory reserved from a bound (the header's
/// size, the texts' bytes as the leaves know them, and each row's other
/// fields at their largest), and the bytes left over are given back: no
/// pass counts the body first. Rows that would push the frame past
/// `maxFrameBytes` are left for the next request (Protocol/SPEC.md section
/// 6.7), counted by `PageMessage.RowsFitting` only when the bound says some
/// might not fit.
enum PageEncoder {
    /// Writes the PAGE body of `rows` into `w`. `withKeys`: the client
    /// announced CLIENT_KEYS, so rows carry their items' client keys.
    static func write(_ rows: PageRows, withKeys: Bool, maxFrameBytes: UInt32, into w: inout WireWriter) {
        var header = rows.header
        let keyed = rows.needsKeys(withKeys)
        let perRow = PageMessage.maxRowBytesBesidesText + (withKeys ? PageMessage.maxKeyBytes : 0)
        let textBound = rows.textBytesBound
        var fitting = PageMessage.RowsFitting(maxFrameBytes: maxFrameBytes)
        if PageMessage.maxHeaderBytes + header.count * perRow + textBound > fitting.maxBodyBytes {
            // Some rows may not fit: count those that do, as the worst case of each says.
            let keyBytes = withKeys ? PageMessage.maxKeyBytes : 0
            rows.forEach(withKeys: false) { fitting.admit(textBytes: $0.textByteCount + keyBytes) }
            header.count = fitting.count
        }
        let bound = header.encodedBytes + header.count * perRow + textBound
        w.writeReserved(atMost: bound) { c in
            header.write(into: &c)
            if keyed {
                writeKeyedRows(rows, count: header.count, into: &c)
            } else {
                var left = header.count
                rows.forEachRun { run in
                    guard left > 0 else { return }
                    left -= writeRows(run, limit: left, into: &c)
                }
            }
        }
    }

    /// Writes up to `limit` of the run's rows, straight from its columns;
    /// returns how many it wrote. One bounds check per row: the row's
    /// largest size against the bytes left.
    @inline(__always)
    private static func writeRows(_ run: RowColumns, limit: Int, into c: inout WireCursor) -> Int {
        let rows = min(run.rows, limit)
        var written = 0
        var slot = run.start
        var from = run.textStart(slot)
        while written < rows {
            let f = run.flags[slot]
            let to = Int(run.textEnds[slot])
            if f & run.mask == run.want {
                precondition(c.remaining >= PageMessage.maxRowBytesBesidesText + (to - from),
                             "PageEncoder: the page's bound was too small")
                PageMessage.writeRow(id: run.id(slot), flags: f, text: UnsafeRawBufferPointer(rebasing: run.text[from..<to]),
                                     into: &c, due: { run.dues[slot] }, price: { run.prices[slot] })
                written &+= 1
            }
            from = to
            slot &+= 1
        }
        return written
    }

    /// The path for rows with client keys: each row looked up and written
    /// with its key.
    private static func writeKeyedRows(_ rows: PageRows, count: Int, into c: inout WireCursor) {
        var left = count
        rows.forEach(withKeys: true) { row in
            guard left > 0 else { return }
            left -= 1
            precondition(c.remaining >= PageMessage.maxRowBytesBesidesText + PageMessage.maxKeyBytes + row.textByteCount,
                         "PageEncoder: the page's bound was too small")
            row.withTextBytes { text in
                PageMessage.writeRow(id: row.id, checked: row.checked, remind: row.remind, due: row.due,
                                     price: row.price, clientKey: row.clientKey, text: text, into: &c)
            }
        }
    }
}
