import ChecklistClient
@testable import ChecklistServer
import ChecklistSocket
import ChecklistTesting
import ChecklistStore
import Glibc

/// A `ChecklistService` in this process on 127.0.0.1 port 0, its data in
/// memory only, its store's commits going to live sync as in `checklistd`.
final class InProcessServer: Sendable {
    let service: ChecklistService
    var hub: SubscriptionHub { service.liveSync }
    var store: Store { service.store }
    var server: ChecklistServer { service.server }

    init(liveSync: LiveSyncConfiguration = LiveSyncConfiguration(), threads: Int = 2) throws {
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.threads = threads
        configuration.logLevel = .error
        configuration.liveSync = liveSync
        service = try ChecklistService(ServiceOptions(configuration: configuration, storage: nil))
    }

    func connect() async throws -> ChecklistConnection {
        try await ChecklistConnection.connect(host: "127.0.0.1", port: server.port, clientName: "live-sync-test")
    }

    func stop() { _ = try? service.shutdown(timeout: .seconds(5)) }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// `count` SET_TEXT operations of `textBytes` bytes on item 1.
func textOps(_ count: Int, textBytes: Int, tag: Int) -> [PatchOperation] {
    (0..<count).map { i in .setText(.id(ItemID(1)), String(repeating: "x", count: max(0, textBytes - 12)) + "-\(tag)-\(i)") }
}
