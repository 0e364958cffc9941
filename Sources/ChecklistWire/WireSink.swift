import ChecklistModel

/// What a layout is written to, field by field: a growing `WireWriter` (a
/// log record among other fields) or reserved memory (`WireCursor`, a
/// frame sized first). A layout written against it is written once for
/// both, and specialized for each.
public protocol WireSink {
    mutating func writeU8(_ v: UInt8)
    mutating func writeVarint(_ v: UInt64)
    mutating func writeZigZag(_ v: Int64)
    mutating func writeString(_ v: String)
    /// Writes **ItemFields** (each sink has its fastest way).
    mutating func writeFields(_ fields: ItemFields)
}

extension WireSink {
    @inlinable public mutating func writeFlag(_ v: Bool) { writeU8(v ? 1 : 0) }
}

extension WireWriter: WireSink {
    @inlinable public mutating func writeFields(_ fields: ItemFields) { fields.encode(into: &self) }
}

extension WireCursor: WireSink {
    @inlinable public mutating func writeFields(_ fields: ItemFields) { fields.write(into: &self) }
}
