import ChecklistClient

/// A JSON value with ordered object keys, printed by hand: no Foundation,
/// keys in the documented order, strings escaped per RFC 8259.
indirect enum JSON {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    /// A number already formatted (e.g. `0.213`).
    case number(String)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    /// Pretty-printed with two-space indentation, no trailing newline.
    func rendered() -> String {
        var out = ""
        write(to: &out, indent: 0)
        return out
    }

    /// On one line, without spaces between tokens.
    func compact() -> String {
        var out = ""
        write(to: &out, indent: nil)
        return out
    }

    /// Writes the value at nesting depth `indent`, or on one line when nil.
    private func write(to out: inout String, indent: Int?) {
        let inner = indent.map { $0 + 1 }
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let n): out += String(n)
        case .uint(let n): out += String(n)
        case .number(let text): out += text
        case .string(let s): Self.writeString(s, to: &out)
        case .array(let elements):
            Self.writeContainer("[", "]", count: elements.count, indent: indent, to: &out) { i, out in
                elements[i].write(to: &out, indent: inner)
            }
        case .object(let members):
            Self.writeContainer("{", "}", count: members.count, indent: indent, to: &out) { i, out in
                Self.writeString(members[i].0, to: &out)
                out += indent == nil ? ":" : ": "
                members[i].1.write(to: &out, indent: inner)
            }
        }
    }

    /// An array or object: `open`, the `count` elements `element` writes,
    /// separated by commas (one per line, indented, unless `indent` is nil), `close`.
    private static func writeContainer(_ open: String, _ close: String, count: Int, indent: Int?, to out: inout String,
                                       element: (Int, inout String) -> Void) {
        guard count > 0 else { out += open + close; return }
        guard let indent else {
            out += open
            for i in 0..<count {
                if i > 0 { out += "," }
                element(i, &out)
            }
            out += close
            return
        }
        out += open + "\n"
        for i in 0..<count {
            out += String(repeating: "  ", count: indent + 1)
            element(i, &out)
            out += i == count - 1 ? "\n" : ",\n"
        }
        out += String(repeating: "  ", count: indent) + close
    }

    static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

/// The JSON shapes of the CLI's answers, with the protocol's field names.
extension JSON {
    static func summary(_ list: ListSummary) -> JSON {
        .object([
            ("id", .uint(list.id.rawValue)),
            ("name", .string(list.name)),
            ("icon", .string(list.icon)),
            ("itemCount", .uint(list.itemCount)),
            ("uncheckedCount", .uint(list.uncheckedCount)),
            ("revision", .uint(list.revision)),
        ])
    }

    static func item(_ item: Item, index: UInt64) -> JSON {
        .object([
            ("id", .uint(item.id.rawValue)),
            ("index", .uint(index)),
            ("text", .string(item.fields.text)),
            ("checked", .bool(item.fields.checked)),
            ("due", item.fields.due.map { .string(Values.formatDate($0)) } ?? .null),
            ("remind", .bool(item.fields.remind)),
            ("price", item.fields.price.map { .int($0) } ?? .null),
        ])
    }

    static func page(_ page: FetchedPage, list: ListSummary) -> JSON {
        .object([
            ("list", summary(list)),
            ("total", .uint(page.total)),
            ("offset", .uint(page.offset)),
            ("items", .array(page.items.enumerated().map { item($1, index: page.offset + UInt64($0)) })),
        ])
    }

    static func patched(_ ok: PatchOK) -> JSON {
        .object([
            ("revision", .uint(ok.revision)),
            ("ids", .array(ok.ids.map { .uint($0.id.rawValue) })),
        ])
    }

    static func deleted(_ list: ListID, revision: Revision) -> JSON {
        .object([("id", .uint(list.rawValue)), ("revision", .uint(revision))])
    }

    static func pong(milliseconds: String) -> JSON {
        .object([("ok", .bool(true)), ("ms", .number(milliseconds))])
    }
}
