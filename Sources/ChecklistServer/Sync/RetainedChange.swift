import ChecklistModel
import ChecklistWire

/// A change as the `ChangeFeed` keeps it: its CHANGE push frame, deflated
/// (zlib level 1) when it is at least `compressionThreshold` bytes and
/// deflating makes it smaller.
///
/// The feed holds the last changes of every list for as long as its bounds
/// allow, which after a bulk load is a second copy of the rows' text: kept
/// as frames, a 1M-item fill held more memory in the feed than in the list.
/// Deflated, a bulk change costs a fraction of its frame. Reading it back
/// inflates it to the identical frame, so CHANGES_SINCE and SUBSCRIBE
/// catch-up answer byte for byte what they did; the feed's byte bound still
/// counts the frame's size, not the stored one, so what is retained is also
/// the same.
struct RetainedChange: Sendable {
    /// Frames shorter than this are kept as they are: one-operation changes
    /// do not shrink enough to pay for the inflating.
    static let compressionThreshold = 256

    let list: ListID
    let namespace: Namespace
    let revision: Revision
    /// Size of the frame (header included).
    let frameCount: Int
    /// The frame, or its zlib stream when shorter than `frameCount`.
    private let stored: [UInt8]

    init(_ change: borrowing EncodedChange) {
        list = change.list
        namespace = change.namespace
        revision = change.revision
        frameCount = change.frame.count
        stored = Self.compact(change.frame)
    }

    /// Bytes held for this change (the array's contents).
    var storedCount: Int { stored.count }

    /// Size of the **ListChange** body.
    var bodyCount: Int { frameCount - FrameHeader.size }

    /// The change as it was published.
    func encoded() -> EncodedChange {
        guard stored.count < frameCount else {
            return EncodedChange(list: list, namespace: namespace, revision: revision, frame: stored)
        }
        let frame: [UInt8]
        do {
            frame = try stored.withUnsafeBytes { raw throws(ChecklistError) in try Zlib.decompress(raw, limit: frameCount) }
        } catch {
            // Deflated here from a frame this process made: it cannot fail to inflate.
            preconditionFailure("RetainedChange: a retained change does not inflate: \(error)")
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
