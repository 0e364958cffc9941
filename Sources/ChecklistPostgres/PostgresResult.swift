import CPostgres

/// The rows of one statement, in binary format, owning its `PGresult`
/// (cleared in `deinit`). Read it on the thread that ran the statement;
/// nothing else holds the pointer.
///
/// Accessors check the column's type OID, so a schema that does not match
/// the code is an `UNEXPECTED_RESULT`, never a misread value.
public final class PostgresResult {
    private let handle: OpaquePointer

    init(taking handle: OpaquePointer) {
        self.handle = handle
    }

    deinit { PQclear(handle) }

    /// Rows returned.
    public var rowCount: Int { Int(PQntuples(handle)) }
    /// Columns per row.
    public var columnCount: Int { Int(PQnfields(handle)) }
    /// Rows an INSERT/UPDATE/DELETE touched (`PQcmdTuples`), 0 if none said.
    public var affectedRows: Int {
        guard let text = PQcmdTuples(handle) else { return 0 }
        return Int(String(cString: text)) ?? 0
    }

    /// The command tag, e.g. `COMMIT`, `INSERT 0 3`.
    public var commandStatus: String {
        PQcmdStatus(handle).map { String(cString: $0) } ?? ""
    }

    public func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(handle, Int32(row), Int32(column)) == 1
    }

    /// An `int8`, `int4` or `int2` column (binary big-endian).
    public func int64(_ row: Int, _ column: Int) throws(PostgresError) -> Int64 {
        let width: Int
        switch PQftype(handle, Int32(column)) {
        case PostgresValue.OID.int8: width = 8
        case PostgresValue.OID.int4: width = 4
        case PostgresValue.OID.int2: width = 2
        case let other: throw PostgresError(.unexpectedResult, "column \(column) has type \(other), not an integer")
        }
        guard !isNull(row, column) else { throw PostgresError(.unexpectedResult, "column \(column) of row \(row) is NULL") }
        return withBytes(row, column) { bytes in
            var value: UInt64 = bytes.count > 0 && bytes[0] & 0x80 != 0 ? UInt64.max : 0
            for byte in bytes.prefix(width) { value = value << 8 | UInt64(byte) }
            return Int64(bitPattern: value)
        }
    }

    /// A non-negative integer column as UInt64.
    public func uint64(_ row: Int, _ column: Int) throws(PostgresError) -> UInt64 {
        let value = try int64(row, column)
        guard value >= 0 else { throw PostgresError(.unexpectedResult, "column \(column) holds \(value), expected >= 0") }
        return UInt64(value)
    }

    /// A `bool` column.
    public func bool(_ row: Int, _ column: Int) throws(PostgresError) -> Bool {
        guard PQftype(handle, Int32(column)) == PostgresValue.OID.bool else {
            throw PostgresError(.unexpectedResult, "column \(column) is not a bool")
        }
        return withBytes(row, column) { $0.first == 1 }
    }

    /// A `text` column (PostgreSQL checked its UTF-8), nil when NULL.
    public func string(_ row: Int, _ column: Int) throws(PostgresError) -> String? {
        guard !isNull(row, column) else { return nil }
        return withBytes(row, column) { String(decoding: $0, as: UTF8.self) }
    }

    /// A `bytea` column copied out, nil when NULL.
    public func bytes(_ row: Int, _ column: Int) -> [UInt8]? {
        guard !isNull(row, column) else { return nil }
        return withBytes(row, column) { Array($0) }
    }

    /// Hands the raw binary value to `body` without copying. The buffer is
    /// only valid inside `body`.
    public func withBytes<R>(_ row: Int, _ column: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        guard let value = PQgetvalue(handle, Int32(row), Int32(column)), length > 0 else {
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return try body(UnsafeRawBufferPointer(start: value, count: length))
    }
}
