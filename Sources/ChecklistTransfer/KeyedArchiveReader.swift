/// Resolves an `NSKeyedArchiver` archive into plain values, written from
/// the format:
///
///     {"$archiver": "NSKeyedArchiver", "$version": 100000,
///      "$top": {"root": UID(1)},
///      "$objects": ["$null", {"$class": UID(2), "NS.objects": [UID(3)]},
///                   {"$classname": "NSArray", "$classes": ["NSArray", "NSObject"]}, "Milk"]}
///
/// A UID is an index into `$objects`; UID 0 (`$null`) is nil. An object is
/// a string or number written as is, or a dictionary whose `$class` names
/// a class dictionary. Arrays (`NSArray`, `NSMutableArray`, sets) become
/// `.array`, `NSDictionary` `.dictionary`, `NSString`/`NSMutableString`
/// (`NS.string`) `.string`, `NSDate` (`NS.time`, seconds since 2001) `.date`,
/// `NSData` `.data`; any other class becomes a `.dictionary` of its encoded
/// keys plus `"$class"`: its name without a module prefix
/// (`Shopping_List.Item` is `Item`). Primitives encoded with
/// `encodeFloat`/`encodeBool`/`encodeInteger` sit inline in the object.
///
/// Errors name what is wrong: a UID out of range, a cycle, a value of the
/// wrong type, nesting deeper than `PropertyListLimits.maxDepth`, more
/// values than `maxNodes`.
public struct KeyedArchiveReader {
    private let objects: [PropertyListValue]
    private let top: [String: PropertyListValue]
    private let limits: PropertyListLimits

    /// Checks the archive's envelope.
    public init(_ archive: PropertyListValue, limits: PropertyListLimits = .init()) throws {
        guard case .dictionary(let root) = archive else { throw Self.error("the root is \(archive.kind), not a dictionary") }
        guard case .string(let archiver)? = root["$archiver"] else { throw Self.error("\"$archiver\" is missing or not a string") }
        guard archiver == "NSKeyedArchiver" else { throw Self.error("\"$archiver\" is \"\(archiver)\", not \"NSKeyedArchiver\"") }
        if let version = root["$version"] {
            guard case .integer(let v) = version, v == 100000 else { throw Self.error("\"$version\" is not 100000") }
        }
        guard case .dictionary(let top)? = root["$top"] else { throw Self.error("\"$top\" is missing or not a dictionary") }
        guard case .array(let objects)? = root["$objects"] else { throw Self.error("\"$objects\" is missing or not an array") }
        self.objects = objects
        self.top = top
        self.limits = limits
    }

    /// The keys of `$top` (e.g. `root` for `archiveRootObject`), sorted.
    public var topKeys: [String] { top.keys.sorted() }

    /// The object under `key` of `$top`, resolved; nil if there is none.
    public func decode(topKey key: String) throws -> PropertyListValue? {
        guard let value = top[key] else { return nil }
        var budget = limits.maxNodes
        var path = Set<UInt64>()
        return try resolve(value, "$top.\(key)", depth: 0, budget: &budget, path: &path)
    }

    /// A value found in an object: a UID is followed, other values stay.
    private func resolve(_ value: PropertyListValue, _ at: String, depth: Int, budget: inout Int, path: inout Set<UInt64>) throws -> PropertyListValue {
        guard depth < limits.maxDepth else { throw Self.error("\(at): objects nested deeper than \(limits.maxDepth) levels") }
        budget -= 1
        guard budget >= 0 else { throw Self.error("more than \(limits.maxNodes) values (shared objects count each time)") }
        switch value {
        case .uid(let uid):
            return try object(uid, at, depth: depth, budget: &budget, path: &path)
        case .array(let elements):
            return .array(try elements.enumerated().map { i, e in
                try resolve(e, "\(at)[\(i)]", depth: depth + 1, budget: &budget, path: &path)
            })
        case .dictionary:
            throw Self.error("\(at): an inline dictionary where a UID or a primitive belongs")
        default:
            return value
        }
    }

    private func object(_ uid: UInt64, _ at: String, depth: Int, budget: inout Int, path: inout Set<UInt64>) throws -> PropertyListValue {
        if uid == 0 { return .null }
        guard uid < UInt64(objects.count) else {
            throw Self.error("\(at): UID \(uid) is out of range (the archive has \(objects.count) objects)")
        }
        guard path.insert(uid).inserted else { throw Self.error("\(at): object \(uid) refers back to itself (a cycle)") }
        defer { path.remove(uid) }
        let here = "object \(uid)"
        guard case .dictionary(let fields) = objects[Int(uid)] else {
            switch objects[Int(uid)] {
            case .uid, .array: throw Self.error("\(here) is \(objects[Int(uid)].kind), not an object")
            case let scalar: return scalar  // NSString, NSNumber written as is
            }
        }
        guard case .uid(let classUID)? = fields["$class"] else { throw Self.error("\(here): \"$class\" is missing or not a UID") }
        let (name, classes) = try classInfo(classUID, here)
        func field(_ key: String) throws -> PropertyListValue? {
            guard let v = fields[key] else { return nil }
            return try resolve(v, "\(here).\(key)", depth: depth + 1, budget: &budget, path: &path)
        }
        func list(_ key: String) throws -> [PropertyListValue] {
            guard let v = try field(key) else { return [] }
            guard case .array(let a) = v else { throw Self.error("\(here) (\(name)): \"\(key)\" is \(v.kind), not an array") }
            return a
        }
        if classes.contains(where: { ["NSArray", "NSSet", "NSOrderedSet"].contains($0) }) {
            return .array(try list("NS.objects"))
        }
        if classes.contains("NSDictionary") {
            let keys = try list("NS.keys"), values = try list("NS.objects")
            guard keys.count == values.count else { throw Self.error("\(here) (\(name)): \(keys.count) keys but \(values.count) values") }
            var out: [String: PropertyListValue] = [:]
            for (k, v) in zip(keys, values) {
                guard case .string(let key) = k else { throw Self.error("\(here) (\(name)): a key that is \(k.kind), not a string") }
                out[key] = v
            }
            return .dictionary(out)
        }
        if classes.contains("NSString") {
            guard case .string(let s)? = try field("NS.string") else { throw Self.error("\(here) (\(name)): \"NS.string\" is missing or not a string") }
            return .string(s)
        }
        if classes.contains("NSDate") {
            guard let t = try field("NS.time")?.number else { throw Self.error("\(here) (\(name)): \"NS.time\" is missing or not a number") }
            return .date(t)
        }
        if classes.contains("NSData") {
            guard case .data(let d)? = try field("NS.data") else { throw Self.error("\(here) (\(name)): \"NS.data\" is missing or not data") }
            return .data(d)
        }
        if classes.contains("NSNull") { return .null }
        var out: [String: PropertyListValue] = ["$class": .string(name)]
        for key in fields.keys where !key.hasPrefix("$") { out[key] = try field(key) }
        return .dictionary(out)
    }

    /// A class dictionary: its name without a module prefix, and the names
    /// of it and its superclasses (also without prefixes).
    private func classInfo(_ uid: UInt64, _ here: String) throws -> (String, Set<String>) {
        guard uid > 0, uid < UInt64(objects.count) else {
            throw Self.error("\(here): class UID \(uid) is out of range (the archive has \(objects.count) objects)")
        }
        guard case .dictionary(let c) = objects[Int(uid)], case .string(let full)? = c["$classname"] else {
            throw Self.error("\(here): its class (object \(uid)) has no \"$classname\" string")
        }
        var classes: Set<String> = [Self.unqualified(full)]
        if case .array(let names)? = c["$classes"] {
            for n in names {
                guard case .string(let s) = n else { throw Self.error("\(here): its class (object \(uid)) lists \(n.kind) in \"$classes\"") }
                classes.insert(Self.unqualified(s))
            }
        }
        return (Self.unqualified(full), classes)
    }

    /// `Shopping_List.Item` is `Item`.
    static func unqualified(_ name: String) -> String {
        name.split(separator: ".").last.map(String.init) ?? name
    }

    private static func error(_ what: String) -> TransferError {
        TransferError("keyed archive: \(what)")
    }
}
