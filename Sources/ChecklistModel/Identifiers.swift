/// The id of a checklist. Assigned by the server, unique within the store and
/// never reused, so a list id from one namespace never names a list of another.
public struct ListID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (a: ListID, b: ListID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { String(rawValue) }
}

/// The stable id of an item. Assigned by the server when the item is inserted,
/// unique within its list and never reused in that list.
public struct ItemID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (a: ItemID, b: ItemID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { String(rawValue) }
}

/// A list's revision: 1 when created, +1 for every change applied to it.
public typealias Revision = UInt64

/// The namespace (user or tenant) a list belongs to. Every list lives in
/// exactly one; without access control every client uses `.default`.
public struct Namespace: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public static let `default` = Namespace("default")
    public var description: String { rawValue }
}
