import ChecklistModel
import ChecklistPersistence
import ChecklistPostgres
import ChecklistWire

/// The payload of a commit notification (`pg_notify('checklist_commits',
/// ...)`, docs/POSTGRES.md "Several nodes"), as text: the sending node's id,
/// then one entry per list the batch touched, `list:revision` (the revision
/// it has after the batch, 0: deleted) or `list:revision:changes`, where
/// `changes` carries the batch's changes of that list: base64 (RFC 4648) of
/// each change's stored body (the `changes.body` column) prefixed by its
/// length as a varint. A follower replays carried changes that follow what
/// it holds without reading the database; an entry without them (a
/// deletion, or changes too big to carry) is read from the database.
/// A batch is cut into several payloads below PostgreSQL's 8000-byte limit.
enum CommitNotice {
    /// At most this many bytes per payload.
    static let maxPayloadBytes = 7900

    /// One list of a notice.
    struct Entry: Equatable {
        var list: ListID
        /// After the batch; 0: deleted.
        var revision: Revision
        /// The batch's changes of the list, in revision order; empty when
        /// not carried.
        var changes: [Change] = []
    }

    /// The payloads announcing `revisions` (nil: deleted), carrying each
    /// list's changes, as the commit stored them (`bodies`), when its entry
    /// fits in a payload.
    static func payloads(node: UInt64, _ revisions: [(ListID, Revision?)], bodies: StoredBodies = [:]) -> [String] {
        let prefix = String(node)
        var payloads: [String] = []
        var current = prefix
        var count = 0
        for (list, revision) in revisions {
            let bare = " \(list.rawValue):\(revision ?? 0)"
            var entry = bare
            if revision != nil, let carried = bodies[list], !carried.isEmpty {
                let joined = join(carried)
                if prefix.utf8.count + bare.utf8.count + 1 + Base64.encodedCount(joined.count) <= maxPayloadBytes {
                    entry += ":" + Base64.encode(joined)
                }
            }
            if current.utf8.count + entry.utf8.count > maxPayloadBytes {
                payloads.append(current)
                current = prefix
                count = 0
            }
            current += entry
            count += 1
        }
        if count > 0 { payloads.append(current) }
        return payloads
    }

    /// The id of the node that sent `payload`, read without parsing the
    /// rest (a follower skips its own node's notices); nil when `payload`
    /// is not a commit notice.
    static func sender(of payload: String) -> UInt64? {
        UInt64(payload[..<(payload.utf8.firstIndex(of: UInt8(ascii: " ")) ?? payload.endIndex)])
    }

    /// The sender and its entries; nil when `payload` is not a commit
    /// notice. Carried changes that do not decode, or do not run
    /// consecutively up to the entry's revision, are dropped (the entry is
    /// then read from the database). Parsed over the payload's UTF-8
    /// bytes: a follower parses every notice of the other nodes.
    ///
    /// - Parameter held: whether the node holds a list at a revision
    ///   already; such an entry's carried changes are not decoded (its
    ///   committer caught up with them, rebasing onto them).
    static func parse(_ payload: String, held: (ListID, Revision) -> Bool = { _, _ in false }) -> (node: UInt64, lists: [Entry])? {
        var text = payload
        return text.withUTF8 { bytes in parse(bytes, held: held) }
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, held: (ListID, Revision) -> Bool) -> (node: UInt64, lists: [Entry])? {
        var words = bytes.split(separator: UInt8(ascii: " "))[...]
        guard let first = words.popFirst(), let node = number(first) else { return nil }
        var lists: [Entry] = []
        lists.reserveCapacity(words.count)
        for word in words {
            let parts = word.split(separator: UInt8(ascii: ":"), maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 2 || parts.count == 3, let list = number(parts[0]), let revision = number(parts[1]) else { return nil }
            var entry = Entry(list: ListID(list), revision: revision)
            if parts.count == 3, !held(entry.list, revision), let decoded = Base64.decode(UnsafeBufferPointer(rebasing: parts[2])),
               let changes = decode(decoded), follows(changes, list: entry.list, to: revision) {
                entry.changes = changes
            }
            lists.append(entry)
        }
        return (node, lists)
    }

    /// A decimal number of ASCII digits (nil: empty, another byte, or too big).
    private static func number(_ digits: Slice<UnsafeBufferPointer<UInt8>>) -> UInt64? {
        guard !digits.isEmpty else { return nil }
        var value: UInt64 = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
            guard !overflowTimes, !overflowSum else { return nil }
            value = sum
        }
        return value
    }

    /// The bodies, each behind its length as a varint.
    private static func join(_ bodies: [[UInt8]]) -> [UInt8] {
        var writer = WireWriter(capacity: bodies.reduce(0) { $0 + $1.count + 2 })
        for body in bodies { writer.writeBytes(body) }
        return writer.bytes
    }

    private static func decode(_ bytes: [UInt8]) -> [Change]? {
        bytes.withUnsafeBytes { raw -> [Change]? in
            var reader = WireReader(raw)
            var changes: [Change] = []
            do {
                while reader.remaining > 0 {
                    var body = WireReader(try reader.readByteSlice("change"))
                    changes.append(try Change.decode(from: &body))
                }
            } catch {
                return nil
            }
            return changes
        }
    }

    /// Whether `changes` are of `list`, consecutive, and end at `revision`.
    private static func follows(_ changes: [Change], list: ListID, to revision: Revision) -> Bool {
        guard let last = changes.last, last.revision == revision else { return false }
        for (i, change) in changes.enumerated() where change.list != list || change.revision != last.revision - Revision(changes.count - 1 - i) {
            return false
        }
        return true
    }
}
