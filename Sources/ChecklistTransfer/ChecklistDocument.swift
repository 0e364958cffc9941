import ChecklistModel

/// Lists with their items, held in memory: what a JSON document or an
/// apps' property list holds, on its way to or from a snapshot. (Snapshots
/// themselves are streamed, never held like this.)
public struct ChecklistDocument: Hashable, Sendable {
    public struct List: Hashable, Sendable {
        /// The list's id, if the source has one (our JSON does; the apps'
        /// property lists do not).
        public var id: ListID?
        public var name: String
        public var icon: String
        public var revision: Revision?
        public var nextItemID: ItemID?
        public var items: [Entry]

        public init(id: ListID? = nil, name: String, icon: String = "No Icon", revision: Revision? = nil,
                    nextItemID: ItemID? = nil, items: [Entry] = []) {
            self.id = id
            self.name = name
            self.icon = icon
            self.revision = revision
            self.nextItemID = nextItemID
            self.items = items
        }
    }

    /// An item; `id` nil when the source has none.
    public struct Entry: Hashable, Sendable {
        public var id: ItemID?
        public var fields: ItemFields
        /// The client's own key for the item, if the source has one: the
        /// Shopping List app's `uuid`. Kept through documents (property
        /// lists, keyed archives, JSON); it does not reach the server until
        /// the wire carries client keys (issue 15, second step), so an
        /// export from the server has none.
        public var clientKey: String?

        public init(id: ItemID? = nil, fields: ItemFields, clientKey: String? = nil) {
            self.id = id
            self.fields = fields
            self.clientKey = clientKey
        }
    }

    public var lists: [List]

    public init(lists: [List]) {
        self.lists = lists
    }

    public var itemCount: Int { lists.reduce(0) { $0 + $1.items.count } }

    /// Snapshot ids for lists without one start here: at or above 2^53 an
    /// import never keeps an id (Protocol/SPEC.md section 6.17), so such
    /// lists are always added as new lists, never replace one.
    public static let firstUnkeptListID: UInt64 = 1 << 53
}
