/// The editable fields of a checklist item, without its id.
public struct ItemFields: Hashable, Sendable {
    /// The item's text (UTF-8, at most `Limits.maxTextBytes` bytes).
    public var text: String
    /// The check mark.
    public var checked: Bool
    /// Due date in seconds since 1970-01-01T00:00:00Z, or nil.
    public var due: Int64?
    /// Whether the app should remind the user at `due`.
    public var remind: Bool
    /// Price in integer minor units (cents), or nil (shopping-list variant).
    public var price: Int64?
    /// The client's own key for the item (`ClientKey`), unique within its
    /// list, or nil.
    public var clientKey: String?

    @inlinable public init(text: String, checked: Bool = false, due: Int64? = nil, remind: Bool = false, price: Int64? = nil,
                clientKey: String? = nil) {
        self.text = text
        self.checked = checked
        self.due = due
        self.remind = remind
        self.price = price
        self.clientKey = clientKey
    }
}

/// A checklist item: its stable id and its fields.
public struct Item: Hashable, Sendable {
    public var id: ItemID
    public var fields: ItemFields

    public init(id: ItemID, fields: ItemFields) {
        self.id = id
        self.fields = fields
    }

    public var text: String { fields.text }
    public var checked: Bool { fields.checked }
}
