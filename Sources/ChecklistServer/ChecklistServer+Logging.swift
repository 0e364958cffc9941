import ChecklistLog
import ChecklistEventLoop
import ChecklistSocket

// The server's start and stop lines, and the file-descriptor limit it needs.
extension ChecklistServer {
    /// Descriptors needed beyond one per connection: listening sockets,
    /// epoll and wake-up descriptors, over-limit connections being refused,
    /// metrics scrapes, log and data files.
    static let descriptorReserve = 256

    /// Raises `RLIMIT_NOFILE` to its hard limit and logs a warning when even
    /// that cannot hold `maxConnections` connections.
    static func raiseDescriptorLimit(for configuration: ServerConfiguration, log: ServerLog) -> UInt64 {
        let (soft, hard) = raiseFileDescriptorLimit()
        let needed = UInt64(configuration.maxConnections + descriptorReserve)
        if soft < needed {
            log.warn("fd_limit", ["soft": soft, "hard": hard, "needed": needed,
                                  "maxConnections": configuration.maxConnections,
                                  "connectionsPossible": soft > UInt64(descriptorReserve) ? soft - UInt64(descriptorReserve) : 0,
                                  "message": "raise the hard limit (ulimit -Hn, LimitNOFILE=) to serve --max-connections"])
        }
        return soft
    }

    /// `level=info event=start ...`: what the server runs with.
    public func logStart() {
        let c = configuration
        log.info("start", ["address": localAddress, "server": c.serverName, "threads": threadCount,
                           "maxConnections": c.maxConnections, "fdLimit": descriptorLimit,
                           "maxInFlight": c.maxInFlight, "maxOutputBytes": c.maxOutputBytes,
                           "idleTimeoutSeconds": c.idleTimeout.map { Self.seconds($0) } ?? "off",
                           "metrics": metricsAddress ?? "off", "dataDir": c.dataDirectory,
                           "tls": c.tls == nil ? "off" : (c.tls!.context.configuration.clientCAFile == nil ? "on" : "mutual"),
                           "plainAddress": plainAddress ?? "off"])
    }

    static func seconds(_ d: Duration) -> String {
        let (seconds, attoseconds) = d.components
        let millis = attoseconds / 1_000_000_000_000_000
        return millis == 0 ? "\(seconds)" : "\(Double(seconds) + Double(millis) / 1000)"
    }

    /// `level=info event=stop ...`: how the shutdown went.
    public func logStop(_ result: TCPServer.ShutdownResult) {
        let report = metrics.report()
        log.log(result.graceful ? .info : .warn, "stop",
                ["graceful": result.graceful, "abortedConnections": result.abortedConnections,
                 "uptimeSeconds": report.uptimeSeconds, "connectionsTotal": report.connectionsTotal,
                 "requests": report.requests.reduce(0) { $0 + $1.requests },
                 "errors": report.errors.reduce(0) { $0 + $1.count }])
    }
}
