import ChecklistModel
import ChecklistSocket
import ChecklistStore
import ChecklistWire

/// A running checklist server: event loops, the listening socket and the
/// protocol sessions over one store.
public final class ChecklistServer: Sendable {
    public let configuration: ServerConfiguration
    public let store: Store
    private let group: EventLoopGroup
    private let tcp: TCPServer

    /// Starts serving; listening when it returns.
    public init(configuration: ServerConfiguration, store: Store) throws {
        self.configuration = configuration
        self.store = store
        let threads = configuration.threads > 0 ? configuration.threads : EventLoopGroup.defaultThreadCount
        group = try EventLoopGroup(threads: threads)
        group.start()
        let dispatcher = RequestDispatcher(store: store, serverName: configuration.serverName, limits: configuration.limits)
        let limits = ConnectionLimits(maxConnections: configuration.maxConnections,
                                      maxInputBytes: Int(configuration.limits.maxFrameBytes) + 64 * 1024,
                                      outputHighWaterMark: configuration.outputHighWaterBytes,
                                      outputLowWaterMark: configuration.outputHighWaterBytes / 4,
                                      maxOutputBytes: configuration.maxOutputBytes)
        let protocolLimits = configuration.limits
        let highWater = configuration.outputHighWaterBytes
        do {
            tcp = try TCPServer(host: configuration.host, port: configuration.port, group: group, limits: limits) { _ in
                ChecklistConnectionHandler(dispatcher: dispatcher, limits: protocolLimits, outputHighWater: highWater)
            }
        } catch {
            group.shutdownAndJoin()
            throw error
        }
    }

    /// `HOST:PORT` actually bound.
    public var localAddress: String { tcp.localAddress }

    /// The bound port (the real one when 0 was asked for).
    public var port: UInt16 { tcp.boundPort }

    /// Stops accepting, lets every connection send what it owes, then stops
    /// the loops. Blocks; call it off the event loops.
    public func shutdown() {
        tcp.shutdown()
        group.shutdownAndJoin()
    }
}
