import ChecklistClient
import ChecklistModel
import ChecklistWire
import ChecklistTesting
import Foundation

/// The server a scenario talks to: one it starts itself (the `checklistd`
/// built next to this binary, on 127.0.0.1 port 0 with a temporary data
/// directory, or on PostgreSQL with `--postgres CONNINFO`), or the one
/// named by `--server HOST:PORT`.
final class BenchTarget {
    let host: String
    let port: UInt16
    private let process: ServerProcess?
    private let dataDirectory: TemporaryDirectory?

    init(_ args: BenchArguments, extraServerArguments: [String] = []) throws {
        if let address = args.string("server") {
            guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else {
                throw BenchArguments.UsageError(description: "--server wants HOST:PORT, got '\(address)'")
            }
            host = String(address[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            self.port = port
            process = nil
            dataDirectory = nil
        } else {
            let directory = try TemporaryDirectory(prefix: "checklist-bench")
            let store = args.string("postgres").map { ["--postgres", $0] } ?? ["--data-dir", directory.path]
            let server = try ServerProcess.start(
                executable: try ProductLocator.path(of: "checklistd"),
                arguments: ["--host", "127.0.0.1", "--port", "0"] + store + extraServerArguments)
            host = server.host
            port = server.port
            process = server
            dataDirectory = directory
        }
    }

    /// The process id of the server this scenario started, if any.
    var serverPID: Int32? { process?.pid }

    /// Peak resident memory of the server this scenario started, if any.
    var serverPeakRssBytes: Int? { process?.peakResidentBytes }

    func connect(name: String = "checklist-bench") async throws -> ChecklistConnection {
        try await ChecklistConnection.connect(host: host, port: port, clientName: name)
    }

    func stop() {
        process?.stop()
        dataDirectory?.remove()
    }

    /// The list named `bench-N-items-B-bytes`, created and filled with `items`
    /// rows of `textBytes` bytes (every third one checked) if it is not
    /// there yet. Fills with pipelined full batches.
    func benchList(items: Int, textBytes: Int, on connection: ChecklistConnection) async throws -> ListSummary {
        let name = "bench-\(items)-items-\(textBytes)-bytes"
        if let existing = try await connection.lists().first(where: { $0.name == name && $0.itemCount == UInt64(items) }) {
            return existing
        }
        let list = try await connection.createList(name: name, icon: "Inbox")
        let batch = Int(connection.serverLimits.maxBatchOps)
        let text = String(repeating: "x", count: max(0, textBytes - 8))
        var next = 0
        let inFlight = 8
        while next < items {
            var requests: [ChecklistWire.Request] = []
            while requests.count < inFlight && next < items {
                let count = min(batch, items - next)
                let ops = (next..<next + count).map { i in
                    PatchOperation.insert(tempRef: nil, position: .end,
                                          fields: ItemFields(text: String(format: "%08d", i % 100_000_000) + text, checked: i % 3 == 0))
                }
                requests.append(.patch(Patch(list: list.id, ops: ops)))
                next += count
            }
            for answer in try await connection.send(batch: requests) {
                if case .error(let e) = answer { throw ClientError.server(e.error) }
            }
        }
        return try await connection.lists().first { $0.id == list.id } ?? list
    }
}
