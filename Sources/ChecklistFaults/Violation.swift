import ChecklistModel

/// One broken promise the checker found, with enough detail to find it
/// again in the history (clients, nodes, keys, revisions, times).
public struct Violation: Sendable, Equatable, CustomStringConvertible {
    /// Which promise. The raw values are the names the report prints.
    public enum Kind: String, Sendable, CaseIterable, Comparable {
        /// A final read failed: a node could not be asked.
        case finalReadFailed
        /// Two nodes hold different rows (or revisions) of a list.
        case nodesDiffer
        /// Two nodes answer different feeds of a list.
        case feedsDiffer
        /// The feed does not run 1, 2, ... up to the list's revision, from its creation.
        case feedGap
        /// Replaying the feed does not give the rows.
        case feedReplay
        /// An acknowledged insert is not in the list (and was not deleted).
        case ackedInsertLost
        /// An item (id or insert text) is in the list twice.
        case insertDuplicated
        /// The feed has an insert or edit no client sent.
        case phantomItem
        /// A patch answered with a definite error took effect.
        case failedPatchApplied
        /// A key's effect is at two revisions of the feed.
        case keyAppliedTwice
        /// An acknowledged patch is not the change at its revision.
        case ackNotInFeed
        /// One revision of a list acknowledged to two different keys.
        case revisionAckedTwice
        /// Two definite answers to one idempotency key differ.
        case keyAnswersDiffer
        /// A client's acknowledged patches of a list do not grow in revision.
        case clientOrder
        /// A patch acknowledged before another was sent got the higher revision (different clients).
        case realTimeOrder
        /// A PAGE is not the list as committed at the revision it names.
        case pageNotCommitted
        /// A CHANGES answer or a delivered change is not the feed.
        case changesNotFeed
        /// RESYNC_REQUIRED for changes the database retains.
        case resyncForRetained
        /// A subscriber was given changes out of order, with a gap or twice.
        case subscriptionGap
        /// An answer took longer than the statement timeout and a margin while the node ran.
        case unboundedWait

        public static func < (a: Kind, b: Kind) -> Bool { allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)! }
    }

    public var kind: Kind
    public var list: ListID?
    public var detail: String

    public init(_ kind: Kind, list: ListID? = nil, _ detail: String) {
        self.kind = kind
        self.list = list
        self.detail = detail
    }

    public var description: String { "\(kind.rawValue)\(list.map { " list \($0)" } ?? ""): \(detail)" }
}
