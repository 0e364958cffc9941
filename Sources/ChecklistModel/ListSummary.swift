/// What the "All Lists" screen shows for one list: no items, only counts.
public struct ListSummary: Hashable, Sendable {
    public var id: ListID
    public var name: String
    public var icon: String
    public var itemCount: UInt64
    public var uncheckedCount: UInt64
    public var revision: Revision

    public init(id: ListID, name: String, icon: String, itemCount: UInt64, uncheckedCount: UInt64, revision: Revision) {
        self.id = id
        self.name = name
        self.icon = icon
        self.itemCount = itemCount
        self.uncheckedCount = uncheckedCount
        self.revision = revision
    }

    /// The overview subtitle the apps show: "(No Items)", "All Done!" or "N Remaining".
    public var subtitle: String {
        if itemCount == 0 { return "(No Items)" }
        if uncheckedCount == 0 { return "All Done!" }
        return "\(uncheckedCount) Remaining"
    }
}

/// Which rows of a list a page counts and returns.
public enum RowFilter: UInt8, Hashable, Sendable, CaseIterable {
    case all = 0
    case checked = 1
    case unchecked = 2

    public func matches(checked: Bool) -> Bool {
        switch self {
        case .all: return true
        case .checked: return checked
        case .unchecked: return !checked
        }
    }
}
