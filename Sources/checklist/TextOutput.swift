import ChecklistClient

/// The human-readable output: aligned tables and short sentences.
enum TextOutput {
    static func lists(_ lists: [ListSummary]) -> String {
        guard !lists.isEmpty else { return "No lists. Create one with: checklist create NAME" }
        return table(header: ["ID", "NAME", "ICON", "STATUS"], rightAligned: [0],
                     rows: lists.map { [String($0.id.rawValue), clean($0.name), clean($0.icon), $0.subtitle] })
    }

    /// One list on one line: `list 3 "Groceries" (icon Groceries): 2 Remaining, revision 7`.
    static func summary(_ list: ListSummary) -> String {
        "list \(list.id) \(quoted(list.name)) (icon \(clean(list.icon))): \(list.subtitle), revision \(list.revision)"
    }

    static func page(_ page: FetchedPage, list: ListSummary) -> String {
        var lines = [summary(list)]
        let which = page.filter == .all ? "" : " \(page.filter)"
        if page.items.isEmpty {
            lines.append(page.total == 0 ? "No\(which) items." : "No rows at offset \(page.offset) (\(page.total)\(which) in total).")
            return lines.joined(separator: "\n")
        }
        lines.append("Rows \(page.offset)-\(page.endOffset - 1) of \(page.total)\(which):")
        let rows = page.items.enumerated().map { position, item in
            [String(page.offset + UInt64(position)),
             String(item.id.rawValue),
             item.fields.checked ? "[x]" : "[ ]",
             clean(item.fields.text, limit: 60),
             item.fields.due.map(Values.formatDate) ?? "",
             item.fields.price.map(Values.formatPrice) ?? ""]
        }
        lines.append(table(header: ["#", "ID", "DONE", "TEXT", "DUE", "PRICE"], rightAligned: [0, 1, 5], rows: rows))
        return lines.joined(separator: "\n")
    }

    static func quoted(_ text: String) -> String { "\"\(clean(text))\"" }

    /// Control characters would break the table: show them as spaces, and
    /// shorten very long texts (the JSON output always has the whole text).
    static func clean(_ text: String, limit: Int = 80) -> String {
        var out = String(String.UnicodeScalarView(text.unicodeScalars.map {
            $0.value < 0x20 || $0.value == 0x7F ? " " : $0
        }))
        if out.count > limit { out = String(out.prefix(limit - 1)) + "…" }
        return out
    }

    /// Columns padded to their widest cell; the last column is not padded.
    static func table(header: [String], rightAligned: Set<Int>, rows: [[String]]) -> String {
        let all = [header] + rows
        var widths = [Int](repeating: 0, count: header.count)
        for row in all { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        return all.map { row in
            var line = ""
            for (i, cell) in row.enumerated() {
                let padding = String(repeating: " ", count: widths[i] - cell.count)
                if i > 0 { line += "  " }
                if rightAligned.contains(i) {
                    line += padding + cell
                } else {
                    line += i == row.count - 1 ? cell : cell + padding
                }
            }
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }
}
