/// The file formats `checklist import` reads and `checklist export` writes.
public enum TransferFormat: String, Hashable, Sendable, CaseIterable {
    /// A Checklists snapshot (Protocol/SNAPSHOT.md): gzip of records.
    case snapshot
    /// The Checklists JSON document (`ChecklistDocument+JSON.swift`).
    case json
    /// The iOS apps' files: the Checklists app's `Checklists.plist`, a
    /// property list (XML or binary) of lists with `name`, `iconName` and
    /// `items`, or a keyed archive (older editions, the Shopping List
    /// app's `items.plist`). On export: `Checklists.plist`.
    case plist
    /// Export only: the Shopping List app's `items.plist`, an
    /// NSKeyedArchiver archive of one list's items (imports read it as
    /// `plist`, being a binary property list).
    case keyedArchive = "keyed-archive"

    /// Tells the format from a file's first bytes (512 are plenty), or nil.
    ///
    /// gzip magic `1F 8B` is a snapshot, `bplist` a binary property list,
    /// `<?xml`/`<plist`/`<!DOCTYPE plist` (after a byte-order mark or white
    /// space) an XML property list, `{` or `[` JSON.
    public static func detect(_ prefix: some Collection<UInt8>) -> TransferFormat? {
        let bytes = Array(prefix.prefix(512))
        if bytes.starts(with: [0x1F, 0x8B]) { return .snapshot }
        if bytes.starts(with: Array("bplist".utf8)) { return .plist }
        var start = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        while start < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start]) { start += 1 }
        let rest = Array(bytes[start...])
        if rest.first == UInt8(ascii: "{") || rest.first == UInt8(ascii: "[") { return .json }
        let text = String(decoding: rest, as: UTF8.self)
        if text.hasPrefix("<?xml") || text.hasPrefix("<plist") || text.hasPrefix("<!DOCTYPE plist") { return .plist }
        return nil
    }
}

/// A file that could not be converted: says where and why.
public struct TransferError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
