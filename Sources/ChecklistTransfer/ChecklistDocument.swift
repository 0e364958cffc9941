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
        /// The client's own key for the item (`fields.clientKey`), if the
        /// source has one: the Shopping List app's `uuid`. Kept through
        /// documents (property lists, keyed archives, JSON) and, as the
        /// item's client key, through the server (Protocol/SPEC.md).
        public var clientKey: String? {
            get { fields.clientKey }
            set { fields.clientKey = newValue }
        }

        /// An entry; a `clientKey` given here replaces the one in `fields`.
        public init(id: ItemID? = nil, fields: ItemFields, clientKey: String? = nil) {
            self.id = id
            self.fields = fields
            if let clientKey { self.fields.clientKey = clientKey }
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
