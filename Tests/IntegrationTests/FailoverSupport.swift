import ChecklistClient
import ChecklistSocket
import ChecklistTesting
import Synchronization
import Testing

/// Two or more `checklistd --postgres` nodes on one database of this run's
/// private cluster, for the failover tests.
struct PostgresNodes {
    let conninfo: String

    init() throws {
        conninfo = try PostgresCluster.freshSharedDatabase(prefix: "checklist_failover")
    }

    /// Starts a node (off the cooperative pool: it waits for the readiness line).
    /// `port` 0 takes any free port.
    func start(port: UInt16 = 0) async throws -> ServerProcess {
        let conninfo = conninfo
        return try await BlockingWork.run {
            try ServerProcess.start(executable: try ProductLocator.path(of: "checklistd"),
                                    arguments: ["--host", "127.0.0.1", "--port", "\(port)", "--postgres", conninfo])
        }
    }
}

extension ServerProcess {
    var serverAddress: ServerAddress { ServerAddress(host: host, port: port) }

    /// `kill -9` or SIGTERM (which waits for the drain), off the cooperative pool.
    func end(signal: Int32) async -> ChecklistTesting.ExitStatus? {
        try? await BlockingWork.run { self.stop(signal: signal) }
    }
}

/// A loopback port nobody listens on now (bound, then closed): for a dead
/// server's address, or for a node started later at an address a client
/// was given first.
func unusedLoopbackPort() throws -> UInt16 {
    let (fd, port) = try makeListeningSocket(host: "127.0.0.1", port: 0)
    closeSocket(fd)
    return port
}

/// Everything a `ChecklistSync` subscription and its `onReconnect` report,
/// read by a task of its own, for a test to wait on.
final class FailoverLog: Sendable {
    private let state = AwaitedState(State())

    struct State {
        var events: [ChangeEvent] = []
        var reconnections: [ChecklistSync.Reconnection] = []
    }

    func record(_ reconnection: ChecklistSync.Reconnection) {
        state.withLock { $0.reconnections.append(reconnection) }
    }

    /// Starts reading `stream` into the log.
    func follow(_ stream: AsyncStream<ChangeEvent>) -> Task<Void, Never> {
        Task { for await event in stream { state.withLock { $0.events.append(event) } } }
    }

    var events: [ChangeEvent] { state.withLock { $0.events } }
    var reconnections: [ChecklistSync.Reconnection] { state.withLock { $0.reconnections } }

    /// The revisions of the `.change` events, in the order reported.
    var changeRevisions: [Revision] {
        events.compactMap { if case .change(let change) = $0 { return change.revision } else { return nil } }
    }

    /// Waits until `condition` holds for the log; false after `timeout`.
    func wait(timeout: Duration = .seconds(30), until condition: @escaping @Sendable (State) -> Bool) async -> Bool {
        await state.wait(timeout: timeout, until: condition)
    }

    func waitForChange(_ revision: Revision) async -> Bool {
        await wait { $0.events.contains { if case .change(let c) = $0 { return c.revision >= revision } else { return false } } }
    }
}
