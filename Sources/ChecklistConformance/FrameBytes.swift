import ChecklistModel
import ChecklistWire

/// Builds the exact bytes of frames, well-formed or not, so that a case
/// states its input literally.
public enum FrameBytes {
    /// A frame with a correct `length` for `body`.
    public static func frame(type: UInt8, flags: UInt8 = 0, id: UInt32, body: [UInt8]) -> [UInt8] {
        header(length: UInt32(6 + body.count), type: type, flags: flags, id: id) + body
    }

    /// The 10 header bytes with any `length`, right or wrong.
    public static func header(length: UInt32, type: UInt8, flags: UInt8 = 0, id: UInt32) -> [UInt8] {
        be32(length) + [type, flags] + be32(id)
    }

    /// A well-formed request frame, uncompressed.
    public static func request(_ request: Request, id: UInt32) -> [UInt8] {
        var w = WireWriter()
        var encoder = FrameEncoder(compress: false)
        request.encode(requestID: id, into: &w, encoder: &encoder)
        return w.bytes
    }

    public static func be32(_ v: UInt32) -> [UInt8] {
        [UInt8(truncatingIfNeeded: v >> 24), UInt8(truncatingIfNeeded: v >> 16),
         UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]
    }
}

/// A message body, field by field (Protocol/SPEC.md section 3).
public struct Body: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public func varint(_ v: UInt64) -> Body { appending { $0.writeVarint(v) } }
    public func u8(_ v: UInt8) -> Body { appending { $0.writeU8(v) } }
    public func string(_ s: String) -> Body { appending { $0.writeString(s) } }
    public func raw(_ b: [UInt8]) -> Body { appending { $0.bytes.append(contentsOf: b) } }
    /// An ItemRef naming item `id`.
    public func item(_ id: ItemID) -> Body { varint(id.rawValue << 1) }
    /// An ItemRef naming temporary reference `t`.
    public func temp(_ t: UInt64) -> Body { varint(t << 1 | 1) }

    private func appending(_ write: (inout WireWriter) -> Void) -> Body {
        var w = WireWriter()
        w.bytes = bytes
        write(&w)
        var copy = self
        copy.bytes = w.bytes
        return copy
    }
}
