/// A statement parameter, always sent in PostgreSQL's binary format with its
/// type's OID, so the server never parses a value out of SQL text: the
/// statement and its values travel apart (`PQexecParams` /
/// `PQexecPrepared`).
///
/// Integers are big-endian two's complement; `text` is its UTF-8 bytes
/// (PostgreSQL refuses NUL and invalid UTF-8 in text with SQLSTATE 22021 /
/// 22P05); arrays are one-dimensional binary arrays, which is how a batch of
/// rows goes into one `INSERT ... SELECT * FROM unnest(...)`.
public enum PostgresValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case int32(Int32)
    case int64(Int64)
    case text(String)
    case bytea([UInt8])
    /// `int8[]`; nil elements are SQL NULL.
    case int64Array([Int64?])
    /// `text[]`; nil elements are SQL NULL.
    case textArray([String?])
    /// `bytea[]`; nil elements are SQL NULL.
    case byteaArray([[UInt8]?])

    /// The type OIDs of `pg_type` this layer sends and reads.
    public enum OID {
        public static let bool: UInt32 = 16
        public static let bytea: UInt32 = 17
        public static let int8: UInt32 = 20
        public static let int2: UInt32 = 21
        public static let int4: UInt32 = 23
        public static let text: UInt32 = 25
        public static let byteaArray: UInt32 = 1001
        public static let textArray: UInt32 = 1009
        public static let int8Array: UInt32 = 1016
    }

    /// The parameter's type OID (0 for NULL: the server infers it).
    var oid: UInt32 {
        switch self {
        case .null: return 0
        case .bool: return OID.bool
        case .int32: return OID.int4
        case .int64: return OID.int8
        case .text: return OID.text
        case .bytea: return OID.bytea
        case .int64Array: return OID.int8Array
        case .textArray: return OID.textArray
        case .byteaArray: return OID.byteaArray
        }
    }

    /// Appends the binary encoding to `out`; returns false for NULL.
    func encode(into out: inout [UInt8]) -> Bool {
        switch self {
        case .null: return false
        case .bool(let v): out.append(v ? 1 : 0)
        case .int32(let v): Self.appendBE(UInt64(UInt32(bitPattern: v)), bytes: 4, to: &out)
        case .int64(let v): Self.appendBE(UInt64(bitPattern: v), bytes: 8, to: &out)
        case .text(let v): out.append(contentsOf: v.utf8)
        case .bytea(let v): out.append(contentsOf: v)
        case .int64Array(let v):
            Self.appendArray(v, element: OID.int8, to: &out) { Self.appendBE(UInt64(bitPattern: $0), bytes: 8, to: &$1) }
        case .textArray(let v):
            Self.appendArray(v, element: OID.text, to: &out) { $1.append(contentsOf: $0.utf8) }
        case .byteaArray(let v):
            Self.appendArray(v, element: OID.bytea, to: &out) { $1.append(contentsOf: $0) }
        }
        return true
    }

    static func appendBE(_ value: UInt64, bytes: Int, to out: inout [UInt8]) {
        for shift in stride(from: (bytes - 1) * 8, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    /// A one-dimensional binary array (PostgreSQL's `array_send`): ndim 1,
    /// has-nulls flag, element OID, length, lower bound 1, then each element
    /// as a 4-byte length (-1 for NULL) and its bytes.
    private static func appendArray<T>(_ elements: [T?], element oid: UInt32, to out: inout [UInt8],
                                       _ encode: (T, inout [UInt8]) -> Void) {
        appendBE(1, bytes: 4, to: &out)
        appendBE(elements.contains { $0 == nil } ? 1 : 0, bytes: 4, to: &out)
        appendBE(UInt64(oid), bytes: 4, to: &out)
        appendBE(UInt64(elements.count), bytes: 4, to: &out)
        appendBE(1, bytes: 4, to: &out)
        for element in elements {
            guard let element else {
                appendBE(UInt64(UInt32.max), bytes: 4, to: &out)
                continue
            }
            let lengthAt = out.count
            appendBE(0, bytes: 4, to: &out)
            let start = out.count
            encode(element, &out)
            let length = UInt32(out.count - start)
            for i in 0..<4 { out[lengthAt + i] = UInt8(truncatingIfNeeded: length >> UInt32(24 - 8 * i)) }
        }
    }
}

extension PostgresValue {
    /// An unsigned id or counter as `int8`: PostgreSQL has no unsigned
    /// integers, so values above 2^63-1 are refused rather than wrapped.
    public static func id(_ value: UInt64, _ field: String) throws(PostgresError) -> PostgresValue {
        .int64(try exactInt64(value, field))
    }

    /// `value` as Int64, or `UNSUPPORTED_VALUE` naming `field`.
    static func exactInt64(_ value: UInt64, _ field: String) throws(PostgresError) -> Int64 {
        guard let exact = Int64(exactly: value) else {
            throw PostgresError(.unsupportedValue, "\(field) \(value) is above PostgreSQL's largest bigint")
        }
        return exact
    }
}
