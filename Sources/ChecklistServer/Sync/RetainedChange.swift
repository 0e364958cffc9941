import ChecklistModel
import ChecklistWire

/// A change as the `ChangeFeed` keeps it: a small patch as the store applied
/// it (its operations, shared with the committed change, encoded when
/// read), any other change as its CHANGE push frame, deflated (zlib level
/// 1) when large enough to pay.
///
/// Most changes are never read back: encoding each at its publish cost
/// more than keeping it, and a kept patch is one reference (retaining and
/// dropping it allocates nothing, copies no change). A change of at least
/// `compressionThreshold` frame bytes is encoded at once and deflated: the
/// feed holds the last changes of every list for as long as its bounds
/// allow, which after a bulk load is a second copy of the rows' text, and
/// deflated a bulk change costs a fraction of its frame. Reading any form
/// back gives the identical frame, so CHANGES_SINCE and SUBSCRIBE catch-up
/// answer byte for byte what they would have; the feed's byte bound counts
/// the frame's size, not what is held, so what is retained is also the same.
struct RetainedChange: Sendable {
    /// Smaller frames are not deflated: one-operation changes do not
    /// shrink enough to pay for deflating and inflating them.
    static let compressionThreshold = 256

    /// Size of the frame (header included): what the feed's bounds count.
    let frameCount: Int
    private let stored: Stored

    private enum Stored: Sendable {
        /// A patch's operations as applied, to encode when read.
        case operations([AppliedOperation])
        /// The frame, or its zlib stream when shorter than `frameCount`.
        case frame([UInt8])
    }

    /// Keeps `change`, whose CHANGE push frame under `maxFrameBytes` is
    /// `frameCount` bytes (`PublishedChange.bodyBytes(of:maxFrameBytes:)`):
    /// a small patch as it is, else encoded (and compacted when large).
    init(_ change: borrowing Change, frameCount: Int, maxFrameBytes: UInt32) {
        if case .patched(let ops) = change.kind, let small = RetainedChange(smallPatch: ops, frameCount: frameCount) {
            self = small
        } else {
            self.frameCount = frameCount
            stored = .frame(Self.compact(EncodedChange(copy change, maxFrameBytes: maxFrameBytes).frame))
        }
    }

    /// Keeps a patch of `ops` whose CHANGE push frame is `frameCount` bytes
    /// as it is, when that is small; nil when it is not (it is kept encoded).
    init?(smallPatch ops: [AppliedOperation], frameCount: Int) {
        guard frameCount < Self.compressionThreshold else { return nil }
        self.frameCount = frameCount
        stored = .operations(ops)
    }

    /// Keeps `change`, already encoded (compacted when large).
    init(_ change: borrowing EncodedChange) {
        frameCount = change.frame.count
        stored = .frame(Self.compact(change.frame))
    }

    /// Bytes held for this change: the frame's size for a patch kept as
    /// it is (what it holds is the operations as the store applied them),
    /// else the array's contents.
    var storedCount: Int {
        switch stored {
        case .operations: frameCount
        case .frame(let bytes): bytes.count
        }
    }

    /// Size of the **ListChange** body.
    var bodyCount: Int { frameCount - FrameHeader.size }

    /// The change as it was published: of `list` in `namespace`, at `revision`.
    func encoded(list: ListID, namespace: Namespace, revision: Revision) -> EncodedChange {
        let frame: [UInt8]
        switch stored {
        case .operations(let ops):
            // Made as its publish made it; `omitted` if it did not fit (a small frame limit).
            var wire = ListChange(Change(namespace: namespace, list: list, revision: revision, kind: .patched(ops)))
            if wire.encodedBytes != bodyCount { wire = ListChange(list: list, revision: revision, kind: .omitted) }
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
