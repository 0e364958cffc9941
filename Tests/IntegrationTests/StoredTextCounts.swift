import ChecklistClient
import ChecklistModel

extension TestServer {
    /// Stops this node, starts a new one on the same PostgreSQL database and
    /// counts how often each item text of `list` is stored: what a crash or
    /// misbehaviour test checks acknowledged patches against.
    func restartedTextCounts(of list: ListID) async throws -> [String: Int] {
        _ = process.stop()
        let restarted = try TestServer.start(store: .postgres, postgres: postgres)
        defer { restarted.stop() }
        let reader = try await restarted.connect()
        var texts: [String] = []
        while true {
            let page = try await reader.page(list, start: .offset(UInt64(texts.count)), limit: 1000)
            texts += page.items.map(\.text)
            if !page.hasMore { break }
        }
        await reader.close()
        return Dictionary(texts.map { ($0, 1) }, uniquingKeysWith: +)
    }
}
