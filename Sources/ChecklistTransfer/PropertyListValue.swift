import Foundation

/// A property list as a tree of values: what a binary property list
/// (`BinaryPropertyListReader`) or an XML one (Foundation) holds, and what a
/// keyed archive (`KeyedArchiveReader`) resolves to.
public indirect enum PropertyListValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    /// A real; a 4-byte real (`encodeFloat`) is kept as the double its
    /// shortest decimal form reads as (2.99f is 2.99, not 2.9900000095).
    case real(Double)
    /// Seconds since 2001-01-01T00:00:00Z (Foundation's reference date).
    case date(Double)
    case data([UInt8])
    case string(String)
    /// A keyed archive's reference into `$objects` (binary marker 0x8).
    case uid(UInt64)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])

    /// A short name of the kind of value, for error messages.
    public var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer: "an integer"
        case .real: "a real"
        case .date: "a date"
        case .data: "data"
        case .string: "a string"
        case .uid: "a UID"
        case .array: "an array"
        case .dictionary: "a dictionary"
        }
    }

    /// The number, if this is an integer or a real (not a boolean).
    public var number: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .real(let d): d
        default: nil
        }
    }

    /// Reads a property list: binary ones with `BinaryPropertyListReader`,
    /// XML ones with Foundation's parser.
    public static func parse(_ bytes: [UInt8], limits: PropertyListLimits = .init()) throws -> PropertyListValue {
        if bytes.starts(with: BinaryPropertyListReader.magic) {
            return try BinaryPropertyListReader(bytes, limits: limits).root()
        }
        let any: Any
        do {
            any = try PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil)
        } catch {
            throw TransferError("property list: not a readable property list (\(error.localizedDescription))")
        }
        var budget = limits.maxNodes
        return try PropertyListValue(foundation: any, depth: 0, limits: limits, budget: &budget)
    }

    private init(foundation value: Any, depth: Int, limits: PropertyListLimits, budget: inout Int) throws {
        guard depth < limits.maxDepth else { throw TransferError("property list: nested deeper than \(limits.maxDepth) levels") }
        budget -= 1
        guard budget >= 0 else { throw TransferError("property list: more than \(limits.maxNodes) values") }
        switch value {
        case let s as String: self = .string(s)
        case let d as Date: self = .date(d.timeIntervalSinceReferenceDate)
        case let d as Data: self = .data(Array(d))
        case let a as [Any]:
            self = .array(try a.map { try PropertyListValue(foundation: $0, depth: depth + 1, limits: limits, budget: &budget) })
        case let d as [String: Any]:
            var out: [String: PropertyListValue] = [:]
            for (k, v) in d { out[k] = try PropertyListValue(foundation: v, depth: depth + 1, limits: limits, budget: &budget) }
            self = .dictionary(out)
        default:
            // A real <true/> comes as Bool; NSNumber 0 and 1 also pass `is Bool`, so ask for the type itself.
            if type(of: value) == Bool.self, let b = value as? Bool {
                self = .bool(b)
            } else if let i = value as? Int64 {
                self = .integer(i)
            } else if let d = value as? Double {
                self = .real(d)
            } else {
                // Foundation turns an XML `{CF$UID: n}` into a private UID type.
                throw TransferError("property list: a value of type \(type(of: value)) is not supported (a keyed archive in XML? "
                    + "NSKeyedArchiver writes binary; convert with `plutil -convert binary1 FILE`)")
            }
        }
    }
}

/// Bounds on reading a property list or a keyed archive, so that a hostile
/// or damaged file fails with an error instead of exhausting memory.
public struct PropertyListLimits: Hashable, Sendable {
    /// Most objects a binary property list may declare (its offset table).
    public var maxObjects: Int
    /// Most values the tree may hold once shared objects are counted as
    /// often as they are referred to.
    public var maxNodes: Int
    /// Deepest nesting of arrays, dictionaries and archived objects.
    public var maxDepth: Int

    public init(maxObjects: Int = 16 << 20, maxNodes: Int = 32 << 20, maxDepth: Int = 64) {
        self.maxObjects = maxObjects
        self.maxNodes = maxNodes
        self.maxDepth = maxDepth
    }
}
