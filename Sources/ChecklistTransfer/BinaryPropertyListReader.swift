/// Reads a binary property list (`bplist00`), written from the format:
///
///     "bplist00" | objects ... | offset table | 32-byte trailer
///
/// The trailer holds the width of an offset-table entry and of an object
/// reference, the number of objects, the top object and where the offset
/// table starts (big-endian). Each object begins with a marker byte: high
/// nibble the type (0 null/false/true, 1 integer, 2 real, 3 date, 4 data,
/// 5 ASCII string, 6 UTF-16 string, 7 UTF-8 string, 8 UID, A array, C set,
/// D dictionary), low nibble a size (0xF: an integer object follows with it).
///
/// Foundation on Linux reads these too, but hands a keyed archive's UIDs
/// back as a private type, so this reader exists. Every offset, count and
/// reference is checked against the file before it is used; nesting, object
/// count and cycles are bounded by `PropertyListLimits`.
public struct BinaryPropertyListReader {
    static let magic: [UInt8] = Array("bplist00".utf8)

    private let bytes: [UInt8]
    private let limits: PropertyListLimits
    private let offsetSize: Int
    private let refSize: Int
    private let objectCount: Int
    private let topObject: Int
    private let tableStart: Int

    /// Checks the header, trailer and offset table.
    public init(_ bytes: [UInt8], limits: PropertyListLimits = .init()) throws {
        self.bytes = bytes
        self.limits = limits
        guard bytes.count >= Self.magic.count + 32, bytes.starts(with: Self.magic) else {
            throw Self.error("shorter than a header and a trailer, or not \"bplist00\"")
        }
        let t = bytes.count - 32
        offsetSize = Int(bytes[t + 6])
        refSize = Int(bytes[t + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(refSize) else {
            throw Self.error("trailer: offset size \(offsetSize) or reference size \(refSize) is not 1 to 8")
        }
        let count = Self.unsigned(bytes, t + 8, 8)
        let top = Self.unsigned(bytes, t + 16, 8)
        let table = Self.unsigned(bytes, t + 24, 8)
        guard count >= 1, count <= UInt64(limits.maxObjects) else {
            throw Self.error("trailer: \(count) objects (at least 1, at most \(limits.maxObjects))")
        }
        guard top < count else { throw Self.error("trailer: top object \(top) is out of range (\(count) objects)") }
        guard table >= 8, table <= UInt64(t), (UInt64(t) - table) / UInt64(offsetSize) >= count else {
            throw Self.error("trailer: the offset table (at \(table), \(count) entries) does not fit in the file")
        }
        objectCount = Int(count)
        topObject = Int(top)
        tableStart = Int(table)
    }

    /// The whole property list as a tree.
    public func root() throws -> PropertyListValue {
        var budget = limits.maxNodes
        var path = Set<Int>()
        return try value(topObject, depth: 0, budget: &budget, path: &path)
    }

    private func value(_ ref: Int, depth: Int, budget: inout Int, path: inout Set<Int>) throws -> PropertyListValue {
        guard depth < limits.maxDepth else { throw Self.error("nested deeper than \(limits.maxDepth) levels") }
        budget -= 1
        guard budget >= 0 else { throw Self.error("more than \(limits.maxNodes) values (shared objects count each time)") }
        var at = try offset(of: ref)
        let marker = bytes[at]
        at += 1
        let low = Int(marker & 0x0F)
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x00: return .null
            case 0x08: return .bool(false)
            case 0x09: return .bool(true)
            default: throw Self.error("object \(ref): unknown marker 0x\(String(marker, radix: 16))")
            }
        case 0x1:
            return .integer(try integer(ref, at: at, widthLog2: low))
        case 0x2:
            guard low == 2 || low == 3 else { throw Self.error("object \(ref): a real of \(1 << min(low, 8)) bytes") }
            try need(ref, at, 1 << low)
            if low == 2 {
                let f = Float(bitPattern: UInt32(Self.unsigned(bytes, at, 4)))
                return .real(Double("\(f)") ?? Double(f))
            }
            return .real(Double(bitPattern: Self.unsigned(bytes, at, 8)))
        case 0x3:
            guard marker == 0x33 else { throw Self.error("object \(ref): unknown marker 0x\(String(marker, radix: 16))") }
            try need(ref, at, 8)
            return .date(Double(bitPattern: Self.unsigned(bytes, at, 8)))
        case 0x4:
            let (n, start) = try length(ref, low, at)
            try need(ref, start, n)
            return .data(Array(bytes[start..<start + n]))
        case 0x5, 0x7:
            let (n, start) = try length(ref, low, at)
            try need(ref, start, n)
            let slice = bytes[start..<start + n]
            if marker >> 4 == 0x5, slice.contains(where: { $0 >= 0x80 }) { throw Self.error("object \(ref): an ASCII string with non-ASCII bytes") }
            guard let s = String(validating: slice, as: UTF8.self) else { throw Self.error("object \(ref): a string that is not valid UTF-8") }
            return .string(s)
        case 0x6:
            let (n, start) = try length(ref, low, at)
            guard n <= Int.max / 2 else { throw Self.error("object \(ref): a string longer than the file") }
            try need(ref, start, 2 * n)
            let units = (0..<n).map { UInt16(bytes[start + 2 * $0]) << 8 | UInt16(bytes[start + 2 * $0 + 1]) }
            guard let s = String(validating: units, as: UTF16.self) else { throw Self.error("object \(ref): a UTF-16 string that is not valid") }
            return .string(s)
        case 0x8:
            try need(ref, at, low + 1)
            return .uid(Self.unsigned(bytes, at, low + 1))
        case 0xA, 0xC:
            let (n, start) = try length(ref, low, at)
            let refs = try references(ref, start, n)
            guard path.insert(ref).inserted else { throw Self.error("object \(ref) contains itself (a cycle)") }
            defer { path.remove(ref) }
            var out: [PropertyListValue] = []
            out.reserveCapacity(min(n, budget))
            for r in refs { out.append(try value(r, depth: depth + 1, budget: &budget, path: &path)) }
            return .array(out)
        case 0xD:
            let (n, start) = try length(ref, low, at)
            guard n <= Int.max / 2 else { throw Self.error("object \(ref): a dictionary larger than the file") }
            let all = try references(ref, start, 2 * n)
            guard path.insert(ref).inserted else { throw Self.error("object \(ref) contains itself (a cycle)") }
            defer { path.remove(ref) }
            var out: [String: PropertyListValue] = [:]
            for i in 0..<n {
                guard case .string(let key) = try value(all[i], depth: depth + 1, budget: &budget, path: &path) else {
                    throw Self.error("object \(ref): a dictionary key that is not a string")
                }
                out[key] = try value(all[n + i], depth: depth + 1, budget: &budget, path: &path)
            }
            return .dictionary(out)
        default:
            throw Self.error("object \(ref): unknown marker 0x\(String(marker, radix: 16))")
        }
    }

    /// Where object `ref` starts, checked to lie among the objects.
    private func offset(of ref: Int) throws -> Int {
        guard ref < objectCount else { throw Self.error("reference \(ref) is out of range (\(objectCount) objects)") }
        let o = Self.unsigned(bytes, tableStart + ref * offsetSize, offsetSize)
        guard o >= 8, o < UInt64(tableStart) else { throw Self.error("object \(ref): offset \(o) is outside the objects") }
        return Int(o)
    }

    /// An integer of 2^widthLog2 bytes: 1, 2 and 4 unsigned, 8 signed, 16 if it fits 64 bits.
    private func integer(_ ref: Int, at: Int, widthLog2: Int) throws -> Int64 {
        guard widthLog2 <= 4 else { throw Self.error("object \(ref): an integer of \(1 << min(widthLog2, 8)) bytes") }
        let width = 1 << widthLog2
        try need(ref, at, width)
        if width == 16 {
            let high = Self.unsigned(bytes, at, 8), low = Self.unsigned(bytes, at + 8, 8)
            guard high == 0 || (high == UInt64.max && low >= 1 << 63) else { throw Self.error("object \(ref): an integer beyond 64 bits") }
            return Int64(bitPattern: low)
        }
        let u = Self.unsigned(bytes, at, width)
        return width == 8 ? Int64(bitPattern: u) : Int64(u)
    }

    /// A count from the marker's low nibble, or from the integer that follows it.
    private func length(_ ref: Int, _ low: Int, _ at: Int) throws -> (Int, Int) {
        guard low == 0xF else { return (low, at) }
        try need(ref, at, 1)
        guard bytes[at] >> 4 == 0x1 else { throw Self.error("object \(ref): its length is not an integer") }
        let widthLog2 = Int(bytes[at] & 0x0F)
        let n = try integer(ref, at: at + 1, widthLog2: widthLog2)
        guard n >= 0, n <= Int64(tableStart) else { throw Self.error("object \(ref): length \(n) is longer than the file") }
        return (Int(n), at + 1 + (1 << widthLog2))
    }

    private func references(_ ref: Int, _ start: Int, _ n: Int) throws -> [Int] {
        guard n <= tableStart / refSize else { throw Self.error("object \(ref): \(n) references do not fit in the file") }
        try need(ref, start, n * refSize)
        return try (0..<n).map { i in
            let r = Self.unsigned(bytes, start + i * refSize, refSize)
            guard r < UInt64(objectCount) else { throw Self.error("object \(ref): reference \(r) is out of range (\(objectCount) objects)") }
            return Int(r)
        }
    }

    /// Checks that `count` bytes from `at` lie before the offset table.
    private func need(_ ref: Int, _ at: Int, _ count: Int) throws {
        guard count >= 0, at <= tableStart, count <= tableStart - at else {
            throw Self.error("object \(ref) runs past the end of the objects")
        }
    }

    private static func unsigned(_ bytes: [UInt8], _ at: Int, _ width: Int) -> UInt64 {
        var v: UInt64 = 0
        for i in 0..<width { v = v << 8 | UInt64(bytes[at + i]) }
        return v
    }

    private static func error(_ what: String) -> TransferError {
        TransferError("binary property list: \(what)")
    }
}
