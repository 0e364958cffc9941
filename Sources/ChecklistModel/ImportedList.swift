/// A whole list as an import set it (`Change.Kind.listImported`): its name,
/// icon, the id its next new item gets, and every item in order.
///
/// Replaying it reproduces the list exactly, whatever it held before: the
/// change's revision is the list's revision after it.
public struct ImportedList: Hashable, Sendable {
    public var name: String
    public var icon: String
    /// The id the list gives its next new item; above every item id in it
    /// (and above those of items deleted before the export).
    public var nextItemID: ItemID
    /// The items, row 0 first.
    public var items: ImportedItems

    public init(name: String, icon: String, nextItemID: ItemID, items: ImportedItems) {
        self.name = name
        self.icon = icon
        self.nextItemID = nextItemID
        self.items = items
    }
}

/// The items of an imported list, in order, read on demand.
///
/// A store hands out the rows it already holds this way (no array of
/// `Item`s is built for a 10M-row list); a decoder of the log builds one
/// from an array. Equality compares the items one by one.
public struct ImportedItems: Hashable, Sendable {
    /// One item with its text lent, not copied: valid only inside the
    /// visitor it is handed to (the log encodes a 10M-item list this way
    /// without making a String per item).
    public struct View {
        public let id: ItemID
        public let checked: Bool
        public let remind: Bool
        public let due: Int64?
        public let price: Int64?
        /// The text's UTF-8 bytes.
        public let text: UnsafeRawBufferPointer
        /// The item's client key, if it has one.
        public let clientKey: String?

        public init(id: ItemID, checked: Bool, remind: Bool, due: Int64?, price: Int64?, text: UnsafeRawBufferPointer,
                    clientKey: String? = nil) {
            self.id = id
            self.checked = checked
            self.remind = remind
            self.due = due
            self.price = price
            self.text = text
            self.clientKey = clientKey
        }
    }

    /// Number of items.
    public let count: Int
    private let visit: @Sendable (_ body: (View) -> Void) -> Void

    /// Items held in an array.
    public init(_ items: [Item]) {
        count = items.count
        visit = { body in
            for item in items { item.withView(body) }
        }
    }

    /// Items produced by `visit`, which must call its argument exactly
    /// `count` times, in order, every time it is called.
    public init(count: Int, visit: @escaping @Sendable (_ body: (View) -> Void) -> Void) {
        self.count = count
        self.visit = visit
    }

    /// Calls `body` with every item, in order, its text lent.
    public func forEachView(_ body: (View) -> Void) {
        visit(body)
    }

    /// Calls `body` with every item, in order.
    public func forEach(_ body: (Item) -> Void) {
        visit { view in
            body(Item(id: view.id, fields: ItemFields(text: String(decoding: view.text, as: UTF8.self), checked: view.checked,
                                                      due: view.due, remind: view.remind, price: view.price,
                                                      clientKey: view.clientKey)))
        }
    }

    /// The items in an array (tests, small lists).
    public var array: [Item] {
        var items: [Item] = []
        items.reserveCapacity(count)
        forEach { items.append($0) }
        return items
    }

    public static func == (a: ImportedItems, b: ImportedItems) -> Bool {
        a.count == b.count && a.array == b.array
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
    }
}

extension Item {
    /// Calls `body` with this item as an `ImportedItems.View`, its text lent
    /// for the duration of the call.
    public func withView<R, E: Error>(_ body: (ImportedItems.View) throws(E) -> R) throws(E) -> R {
        var text = fields.text
        let f = fields
        let result = text.withUTF8 { utf8 in
            Result { () throws(E) -> R in
                try body(ImportedItems.View(id: id, checked: f.checked, remind: f.remind, due: f.due, price: f.price,
                                            text: UnsafeRawBufferPointer(utf8), clientKey: f.clientKey))
            }
        }
        return try result.get()
    }
}
