import ChecklistModel
import ChecklistWire

/// A change as the `ChangeFeed` keeps it: a small one unencoded (its
/// **ListChange** as published, encoded when read), a large one as its
/// CHANGE push frame, deflated (zlib level 1) when that makes it smaller.
///
/// Most changes are never read back: encoding each at its publish cost a
/// tenth of a single-item patch's instructions for a frame that no one
/// asked for. A change of at least `compressionThreshold` frame bytes is
/// encoded at once and deflated: the feed holds the last changes of every
/// list for as long as its bounds allow, which after a bulk load is a
/// second copy of the rows' text, and deflated a bulk change costs a
/// fraction of its frame. Reading either form back gives the identical
/// frame, so CHANGES_SINCE and SUBSCRIBE catch-up answer byte for byte
/// what they would have; the feed's byte bound counts the frame's size,
/// not what is held, so what is retained is also the same.
struct RetainedChange: Sendable {
    /// Smaller frames are kept unencoded: one-operation changes do not
    /// shrink enough to pay for deflating and inflating them.
    static let compressionThreshold = 256

    let list: ListID
    let namespace: Namespace
    let revision: Revision
    /// Size of the frame (header included).
    let frameCount: Int
    private let stored: Stored

    private enum Stored: Sendable {
        /// The **ListChange** as published, to encode when read.
        case unencoded(ListChange)
        /// The frame, or its zlib stream when shorter than `frameCount`.
        case frame([UInt8])
    }

    /// Keeps `change`: unencoded when small, else encoded and compacted.
    init(_ change: PublishedChange) {
        list = change.list
        namespace = change.namespace
        revision = change.revision
        frameCount = change.frameBytes
        stored = frameCount < Self.compressionThreshold
            ? .unencoded(change.wire) : .frame(Self.compact(EncodedChange(change).frame))
    }

    /// Keeps `change`, already encoded (compacted when large).
    init(_ change: borrowing EncodedChange) {
        list = change.list
        namespace = change.namespace
        revision = change.revision
        frameCount = change.frame.count
        stored = .frame(Self.compact(change.frame))
    }

    /// Bytes held for this change: the frame's size for one kept
    /// unencoded (what it holds is the operations as the store applied
    /// them), else the array's contents.
    var storedCount: Int {
        switch stored {
        case .unencoded: frameCount
        case .frame(let bytes): bytes.count
        }
    }

    /// Size of the **ListChange** body.
    var bodyCount: Int { frameCount - FrameHeader.size }

    /// The change as it was published.
    func encoded() -> EncodedChange {
        let frame: [UInt8]
        switch stored {
        case .unencoded(let wire):
            return EncodedChange(namespace: namespace, wire: wire, bodyBytes: bodyCount)
        case .frame(let bytes) where bytes.count == frameCount:
            frame = bytes
        case .frame(let deflated):
            do {
                frame = try deflated.withUnsafeBytes { raw throws(ChecklistError) in try Zlib.decompress(raw, limit: frameCount) }
            } catch {
                // Deflated here from a frame this process made: it cannot fail to inflate.
                preconditionFailure("RetainedChange: a retained change does not inflate: \(error)")
            }
        }
        precondition(frame.count == frameCount, "RetainedChange: a retained change inflated to another size")
        return EncodedChange(list: list, namespace: namespace, revision: revision, frame: frame)
    }

    /// `frame` deflated into an array of exactly its size, or `frame`
    /// itself when that is not smaller.
    private static func compact(_ frame: [UInt8]) -> [UInt8] {
        guard frame.count >= compressionThreshold else { return frame }
        var deflated: [UInt8] = []
        let smaller = frame.withUnsafeBytes { Zlib.compress($0, into: &deflated, limit: frame.count - 1) }
        // `compress` leaves the array at `limit` capacity, and an encoder's
        // frame may have grown past its size: keep only the bytes.
        return exactCopy(smaller ? deflated : frame)
    }

    private static func exactCopy(_ bytes: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, initialized in
            initialized = buffer.initialize(fromContentsOf: bytes)
        }
    }
}
