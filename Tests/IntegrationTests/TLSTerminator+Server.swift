import ChecklistTesting
import ChecklistTLS

extension TLSTerminator {
    /// Starts a `checklistd` and a TLS front for it with `configuration`;
    /// stopping the front stops the server.
    static func start(_ configuration: TLSServerConfiguration) throws -> TLSTerminator {
        let server = try TestServer.start()
        do {
            return try TLSTerminator(context: TLSContext(server: configuration), backendPort: server.port, onStop: { server.stop() })
        } catch {
            server.stop()
            throw error
        }
    }
}
