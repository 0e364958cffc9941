/// Writes a binary property list (`bplist00`, see `BinaryPropertyListReader`)
/// laid out as CoreFoundation's writer does: objects in depth-first order
/// (a dictionary's keys, then its values), equal strings, numbers, dates
/// and data written once, integers in the fewest of 1, 2, 4 or 8 bytes
/// (negative ones in 8), ASCII strings as such and others as UTF-16, and
/// offsets and references in the fewest bytes that hold them. Dictionary
/// keys are written sorted (CoreFoundation uses its hash order; readers
/// never depend on either).
public struct BinaryPropertyListWriter {
    /// Reals under these dictionary keys are written in 4 bytes, as
    /// `NSCoder.encode(_: Float, forKey:)` does (e.g. a Shopping List price).
    public var singlePrecisionKeys: Set<String>

    public init(singlePrecisionKeys: Set<String> = []) {
        self.singlePrecisionKeys = singlePrecisionKeys
    }

    private enum Flat {
        case scalar(PropertyListValue, single: Bool)
        case array([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    private struct ScalarKey: Hashable {
        var value: PropertyListValue
        var single: Bool
    }

    /// The bytes of `root` as a binary property list.
    public func write(_ root: PropertyListValue) -> [UInt8] {
        var objects: [Flat] = []
        var unique: [ScalarKey: Int] = [:]
        func flatten(_ value: PropertyListValue, single: Bool = false) -> Int {
            switch value {
            case .array(let elements):
                let index = objects.count
                objects.append(.array([]))
                objects[index] = .array(elements.map { flatten($0) })
                return index
            case .dictionary(let d):
                let index = objects.count
                objects.append(.array([]))
                let keys = d.keys.sorted()
                let keyRefs = keys.map { flatten(.string($0)) }
                let valueRefs = keys.map { flatten(d[$0]!, single: singlePrecisionKeys.contains($0)) }
                objects[index] = .dictionary(keys: keyRefs, values: valueRefs)
                return index
            default:
                let key = ScalarKey(value: value, single: single)
                if let known = unique[key] { return known }
                unique[key] = objects.count
                objects.append(.scalar(value, single: single))
                return objects.count - 1
            }
        }
        _ = flatten(root)
        let refSize = Self.width(UInt64(objects.count - 1))
        var out = Array("bplist00".utf8)
        var offsets: [UInt64] = []
        offsets.reserveCapacity(objects.count)
        for object in objects {
            offsets.append(UInt64(out.count))
            switch object {
            case .scalar(let value, let single): Self.encode(value, single: single, into: &out)
            case .array(let refs):
                Self.marker(0xA, refs.count, into: &out)
                for r in refs { Self.append(UInt64(r), refSize, into: &out) }
            case .dictionary(let keys, let values):
                Self.marker(0xD, keys.count, into: &out)
                for r in keys + values { Self.append(UInt64(r), refSize, into: &out) }
            }
        }
        let tableStart = UInt64(out.count)
        let offsetSize = Self.width(offsets.last ?? 0)
        for o in offsets { Self.append(o, offsetSize, into: &out) }
        out += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(refSize)]
        Self.append(UInt64(objects.count), 8, into: &out)
        Self.append(0, 8, into: &out)
        Self.append(tableStart, 8, into: &out)
        return out
    }

    private static func encode(_ value: PropertyListValue, single: Bool, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(0x00)
        case .bool(let b): out.append(b ? 0x09 : 0x08)
        case .integer(let i): integer(i, into: &out)
        case .real(let d):
            if single {
                out.append(0x22)
                append(UInt64(Float(d).bitPattern), 4, into: &out)
            } else {
                out.append(0x23)
                append(d.bitPattern, 8, into: &out)
            }
        case .date(let d):
            out.append(0x33)
            append(d.bitPattern, 8, into: &out)
        case .data(let bytes):
            marker(0x4, bytes.count, into: &out)
            out += bytes
        case .string(let s):
            if s.utf8.allSatisfy({ $0 < 0x80 }) {
                marker(0x5, s.utf8.count, into: &out)
                out += s.utf8
            } else {
                let units = Array(s.utf16)
                marker(0x6, units.count, into: &out)
                for u in units { out += [UInt8(u >> 8), UInt8(u & 0xFF)] }
            }
        case .uid(let u):
            let w = width(u)
            out.append(0x80 | UInt8(w - 1))
            append(u, w, into: &out)
        case .array, .dictionary:
            preconditionFailure("containers are flattened before encoding")
        }
    }

    private static func integer(_ i: Int64, into out: inout [UInt8]) {
        if i < 0 {
            out.append(0x13)
            append(UInt64(bitPattern: i), 8, into: &out)
            return
        }
        let w = width(UInt64(i))
        let log2 = w.trailingZeroBitCount
        out.append(0x10 | UInt8(log2))
        append(UInt64(i), 1 << log2, into: &out)
    }

    private static func marker(_ type: UInt8, _ count: Int, into out: inout [UInt8]) {
        if count < 15 {
            out.append(type << 4 | UInt8(count))
        } else {
            out.append(type << 4 | 0x0F)
            integer(Int64(count), into: &out)
        }
    }

    /// Bytes needed for `v`: 1, 2, 4 or 8.
    private static func width(_ v: UInt64) -> Int {
        v <= 0xFF ? 1 : v <= 0xFFFF ? 2 : v <= 0xFFFF_FFFF ? 4 : 8
    }

    private static func append(_ v: UInt64, _ width: Int, into out: inout [UInt8]) {
        for i in stride(from: width - 1, through: 0, by: -1) { out.append(UInt8(truncatingIfNeeded: v >> (8 * i))) }
    }
}
