import ChecklistClient
import ChecklistModel
import Testing

/// The scenario both TLS suites run over one TLS connection: a list of 300
/// long rows written and read back whole, then as 100 pipelined pages, each
/// from its own task (many writers and the reader share the session).
enum TLSScenario {
    static func run(_ client: ChecklistConnection, name: String) async throws {
        let list = try await client.createList(name: name, icon: "Groceries")
        let texts = (0..<300).map { "item \($0) " + String(repeating: "x", count: 200) }
        let added = try await client.patch(list.id, ops: texts.enumerated().map { i, text in
            .insert(tempRef: UInt64(i + 1), position: .end, fields: ItemFields(text: text))
        })
        #expect(added.ids.count == texts.count)
        let page = try await client.page(list.id, limit: 300, filter: .all)
        #expect(page.items.map(\.text) == texts)
        let pages = try await withThrowingTaskGroup(of: (Int, [String]).self) { group in
            for offset in stride(from: 0, to: 300, by: 3) {
                group.addTask { (offset, try await client.page(list.id, start: .offset(UInt64(offset)), limit: 3).items.map(\.text)) }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(pages.count == 100)
        #expect(pages.allSatisfy { offset, items in items == Array(texts[offset..<offset + 3]) })
    }
}
