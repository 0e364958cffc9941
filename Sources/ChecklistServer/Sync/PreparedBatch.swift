import ChecklistModel
import ChecklistWire

/// What the change feed keeps of each change of one publish, made before
/// the hub's lock (`SubscriptionHub.publish`): a small patch's operations,
/// shared; any other change encoded, and a bulk one deflated, here rather
/// than under the lock. The array keeps its capacity from publish to
/// publish: a warm hub allocates nothing here for a batch of patches.
struct PreparedBatch {
    /// One per change, in order; nil once taken, or when the feed keeps
    /// nothing of the change.
    private var retained: [RetainedChange?] = []
    /// Past this many changes (a bulk commit) the array is not kept.
    private static let keptChanges = 4096

    /// Adds what the feed keeps of `changes[index]`, sent under
    /// `maxFrameBytes`, as `feed` says. A patch that travels as it is
    /// (most changes) is sized from its fields read in place, and a small
    /// one kept without touching the change whole: handed whole to a
    /// function, a change is copied first (its namespace and operations
    /// retained, its kind copied through a call).
    mutating func add(_ changes: [Change], at index: Int, maxFrameBytes: UInt32, feed: ChangeFeed.Configuration) {
        guard case .patched(let ops) = changes[index].kind,
              let body = PublishedChange.plainPatchBytes(list: changes[index].list, revision: changes[index].revision,
                                                         ops: ops, maxFrameBytes: maxFrameBytes) else {
            add(changes[index], maxFrameBytes: maxFrameBytes, feed: feed)
            return
        }
        guard ChangeFeed.retains(isDeletion: false, under: feed) else {
            retained.append(nil)
            return
        }
        let frameCount = FrameHeader.size + body
        retained.append(RetainedChange(smallPatch: ops, frameCount: frameCount)
                        ?? RetainedChange(changes[index], frameCount: frameCount, maxFrameBytes: maxFrameBytes))
    }

    /// Adds what the feed keeps of `change`, sent under `maxFrameBytes`,
    /// as `feed` says.
    mutating func add(_ change: borrowing Change, maxFrameBytes: UInt32, feed: ChangeFeed.Configuration) {
        retained.append(Self.kept(of: change, maxFrameBytes: maxFrameBytes, feed: feed))
    }

    /// What the feed keeps of `change`, sent under `maxFrameBytes`, as
    /// `feed` says (nil: nothing): for one change, no batch needed.
    static func kept(of change: borrowing Change, maxFrameBytes: UInt32, feed: ChangeFeed.Configuration) -> RetainedChange? {
        guard ChangeFeed.retains(isDeletion: change.isDeletion, under: feed) else { return nil }
        let frameCount = FrameHeader.size + PublishedChange.bodyBytes(of: change, maxFrameBytes: maxFrameBytes)
        return RetainedChange(change, frameCount: frameCount, maxFrameBytes: maxFrameBytes)
    }

    /// Moves out what the feed keeps of the `index`th change.
    mutating func take(_ index: Int) -> RetainedChange? {
        retained[index].take()
    }

    /// Forgets the changes, keeping the array's capacity unless a bulk
    /// commit grew it past `keptChanges`.
    mutating func removeAll() {
        retained.removeAll(keepingCapacity: retained.capacity <= Self.keptChanges)
    }
}
