import ChecklistClient
@testable import ChecklistServer
import ChecklistSocket
import ChecklistTesting
import ChecklistStore
import Glibc

/// A `ChecklistServer` in this process on 127.0.0.1 port 0, its store's
/// commits fanned out to a `SubscriptionHub` exactly as `checklistd` wires it.
final class InProcessServer: Sendable {
    let hub: SubscriptionHub
    let store: Store
    let server: ChecklistServer

    init(liveSync: LiveSyncConfiguration = LiveSyncConfiguration(), threads: Int = 2) throws {
        hub = SubscriptionHub(configuration: liveSync)
        let fanout = CommitFanout()
        store = Store(onCommitGroup: fanout.onCommitGroup)
        fanout.addEach(hub.publish)
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.threads = threads
        configuration.logLevel = .error
        configuration.liveSync = liveSync
        server = try ChecklistServer(configuration: configuration, store: store, liveSync: hub)
    }

    func connect() async throws -> ChecklistConnection {
        try await ChecklistConnection.connect(host: "127.0.0.1", port: server.port, clientName: "live-sync-test")
    }

    func stop() { server.shutdown(timeout: .seconds(5)) }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// `count` SET_TEXT operations of `textBytes` bytes on item 1.
func textOps(_ count: Int, textBytes: Int, tag: Int) -> [PatchOperation] {
    (0..<count).map { i in .setText(.id(ItemID(1)), String(repeating: "x", count: max(0, textBytes - 12)) + "-\(tag)-\(i)") }
}
