import Synchronization

/// The order in which a `ChecklistSync` tries its servers: the one that
/// answered last first, and after a loss the servers after the lost one
/// first (it goes last), so the clients of a dead node move on without
/// waiting for it. Shared by every connection of one `ChecklistSync`.
final class ServerRotation: Sendable {
    let servers: [ServerAddress]
    /// The index of the server to try first.
    private let preferred = Mutex(0)

    init(_ servers: [ServerAddress]) {
        precondition(!servers.isEmpty, "a rotation needs a server")
        self.servers = servers
    }

    /// The servers in the order to try them, `lost` (the server a
    /// connection was just lost from) last.
    func order(avoiding lost: ServerAddress?) -> [ServerAddress] {
        let start = preferred.withLock { preferred -> Int in
            if let lost, let index = servers.firstIndex(of: lost), index == preferred {
                preferred = (index + 1) % servers.count
            }
            return preferred
        }
        return Array(servers[start...] + servers[..<start])
    }

    /// Remembers the server that answered, to try it first next time.
    func answered(_ server: ServerAddress) {
        guard let index = servers.firstIndex(of: server) else { return }
        preferred.withLock { $0 = index }
    }
}
