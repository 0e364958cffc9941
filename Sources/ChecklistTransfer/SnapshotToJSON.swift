import ChecklistModel
import ChecklistSnapshot

/// Converts a snapshot arriving in pieces (a file, or EXPORT chunks) to the
/// JSON document, streaming: memory stays bounded whatever its size.
public final class SnapshotToJSON {
    private let decoder: SnapshotDecoder
    private var writer: JSONDocumentWriter
    /// Lists and items converted so far.
    public private(set) var lists = 0
    public private(set) var items = 0

    /// - Parameter output: receives the JSON text in pieces, in order.
    public init(name: String, output: @escaping ([UInt8]) throws -> Void) throws {
        decoder = try SnapshotDecoder(name: name)
        writer = try JSONDocumentWriter(output: output)
    }

    /// Converts the next bytes of the snapshot file.
    public func feed(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { raw in
            var offset = 0
            while true {
                if try drain() { return }
                guard offset < raw.count else { return }
                offset += decoder.feed(UnsafeRawBufferPointer(rebasing: raw[offset...]))
            }
        }
    }

    /// The file is complete: checks its trailer and ends the JSON.
    public func finish() throws {
        decoder.endInput()
        guard try drain() else { throw TransferError("the snapshot decoder wants more input after the end") }
        try writer.finish()
    }

    /// Converts what the decoder has; true once the verified end is reached.
    private func drain() throws -> Bool {
        while true {
            switch try decoder.next() {
            case .header:
                continue
            case .list(let l):
                try writer.beginList(id: l.id, name: l.name, icon: l.icon, revision: l.revision, nextItemID: l.nextItemID)
                lists += 1
            case .item(let item):
                try writer.item(item)
                items += 1
            case .idempotency:
                continue  // a server's memory of keys, not list data
            case .needInput:
                return false
            case .end:
                return true
            }
        }
    }
}
