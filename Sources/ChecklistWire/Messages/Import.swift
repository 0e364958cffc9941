import ChecklistModel

/// IMPORT (0x41): streams a snapshot (Protocol/SNAPSHOT.md) to the server,
/// which applies it atomically at END (Protocol/SPEC.md section 6.17).
public struct Import: WireMessage {
    public static let messageType = MessageType.import

    /// How the imported lists meet the namespace's lists.
    public enum Mode: UInt8, Hashable, Sendable {
        /// Lists are added, or replace the list with their id.
        case merge = 0
        /// The namespace holds exactly the snapshot's lists afterwards.
        case replace = 1
    }

    /// The `action` byte and its fields.
    public enum Action: Hashable, Sendable {
        /// Starts an import.
        case begin(mode: Mode)
        /// The next bytes of the snapshot file; `sequence` counts from 1.
        case data(sequence: UInt64, bytes: [UInt8])
        /// The file is complete: check it and apply it.
        case end
        /// Drops the import; nothing is applied.
        case cancel
    }

    public var action: Action

    public init(_ action: Action) {
        self.action = action
    }

    public static func decode(from r: inout WireReader) throws(ChecklistError) -> Import {
        let action = try r.readU8("action")
        switch action {
        case 0:
            let raw = try r.readU8("mode")
            guard let mode = Mode(rawValue: raw) else { throw .badField("mode", "IMPORT mode must be 0 or 1, got \(raw)") }
            return Import(.begin(mode: mode))
        case 1:
            return Import(.data(sequence: try r.readVarint("sequence"), bytes: try r.readBytes("data")))
        case 2:
            return Import(.end)
        case 3:
            return Import(.cancel)
        default:
            throw .badField("action", "IMPORT action must be 0 to 3, got \(action)")
        }
    }

    public func encode(into w: inout WireWriter) {
        switch action {
        case .begin(let mode):
            w.writeU8(0)
            w.writeU8(mode.rawValue)
        case .data(let sequence, let bytes):
            w.writeU8(1)
            w.writeVarint(sequence)
            w.writeBytes(bytes)
        case .end:
            w.writeU8(2)
        case .cancel:
            w.writeU8(3)
        }
    }
}
