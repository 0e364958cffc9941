import ChecklistModel

/// Connecting to one of several servers (`checklistd` nodes on one
/// PostgreSQL database, docs/SEVERAL-NODES.md "Running several nodes").
extension ChecklistConnection {
    /// Connects to the first of `servers` that completes the handshake,
    /// trying them in the order given.
    ///
    /// A server that cannot be reached (refused, unreachable, timed out),
    /// closes the connection or answers like something that is not
    /// `checklistd`, or says it is shutting down (`SHUTTING_DOWN`) or full
    /// (`LIMIT_EXCEEDED`) is skipped for the next. Other failures (a bad
    /// token, a refused certificate, an unsupported version) are thrown at
    /// once: another node of the same service would answer the same.
    ///
    /// - Parameters:
    ///   - servers: the servers, in the order to try them; not empty.
    ///   - timeout: the time allowed for each server (resolving,
    ///     connecting and the handshake), not for all of them.
    ///   - the others: as in `connect(host:port:...)`; `tls` is used with
    ///     every server and verified against each one's host.
    /// - Throws: `ClientError` `.connectionFailed` naming every server
    ///   tried and why each failed when none could be used (`.timeout` or
    ///   `.connectionClosed` when that is what every one did); otherwise
    ///   as `connect(host:port:...)`.
    public static func connect(servers: [ServerAddress], clientName: String, token: String? = nil,
                               compression: Bool = true, timeout: Duration = .seconds(10),
                               requestTimeout: Duration? = nil,
                               tls: TLSClientConfiguration? = nil) async throws -> ChecklistConnection {
        guard !servers.isEmpty else { throw ClientError(.connectionFailed, "no server to connect to") }
        var failures: [(ServerAddress, ClientError)] = []
        for server in servers {
            do {
                return try await connect(host: server.host, port: server.port, clientName: clientName, token: token,
                                         compression: compression, timeout: timeout, requestTimeout: requestTimeout, tls: tls)
            } catch let error as ClientError where Self.movesOn(error) {
                failures.append((server, error))
            }
        }
        throw Self.noServer(failures)
    }

    /// Why the connection closed (e.g. the server's SHUTTING_DOWN goodbye),
    /// nil while it is open.
    var closeReason: ClientError? {
        core.state.withLock { $0.table.closeReason }
    }

    /// Whether a failure to connect to one server is a reason to try the next.
    static func movesOn(_ error: ClientError) -> Bool {
        switch error.code {
        case .connectionFailed, .connectionClosed, .timeout, .protocolViolation, .tlsFailed:
            return true
        case .server:
            return error.wireCode == .shuttingDown || error.wireCode == .limitExceeded
        default:
            return false
        }
    }

    /// The error when every server failed: one that names each.
    static func noServer(_ failures: [(ServerAddress, ClientError)]) -> ClientError {
        if failures.count == 1 { return failures[0].1 }
        let codes = Set(failures.map(\.1.code))
        let code = codes.count == 1 && codes.first != .server ? failures[0].1.code : .connectionFailed
        let each = failures.map { "\($0.0): \($0.1)" }.joined(separator: "; ")
        return ClientError(code, "no server of \(failures.count) could be used (\(each))")
    }
}
