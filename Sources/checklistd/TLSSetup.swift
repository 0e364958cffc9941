import ChecklistEventLoop
import ChecklistServer
import ChecklistTLS

/// `--tls-cert`, `--tls-key`, `--tls-client-ca`, `--plain-port` and SIGHUP:
/// how checklistd sets up its TLS port and says what it runs with.
enum TLSSetup {
    /// Loads the certificate and key (and client CA), or returns nil when
    /// `--port` is plaintext. Starts no thread.
    static func start(_ options: Options) throws -> TLSListenerSettings? {
        guard let files = options.tlsFiles else { return nil }
        let context: ReloadableTLSContext
        do {
            context = try ReloadableTLSContext(files)
        } catch {
            throw AccessSetup.Refusal(description: "TLS: \(error)")
        }
        let mutual = files.clientCAFile.map { ", client certificates required (CA \($0))" } ?? ""
        AccessSetup.log("TLS on --port with \(files.certificateFile)\(mutual); SIGHUP reloads the certificate and key")
        return TLSListenerSettings(context: context, handshakeTimeout: options.tlsHandshakeTimeout)
    }

    /// Where `--plain-port` binds: loopback unless `--insecure-bind`.
    static func plainHost(_ options: Options) -> String {
        let host = options.configuration.host
        return options.insecureBind || AccessControl.isLoopback(host: host) ? host : "127.0.0.1"
    }

    /// The SIGHUP action: reload the certificate and key, keeping the pair
    /// in use if the files do not load.
    static func reload(_ settings: TLSListenerSettings?) {
        guard let settings else { return }
        let files = settings.context.configuration
        do {
            try settings.context.reload()
            AccessSetup.log("reloaded the TLS certificate \(files.certificateFile) and key \(files.privateKeyFile): "
                            + "new connections use them")
        } catch {
            AccessSetup.log("cannot reload the TLS certificate and key: \(error); keeping the pair in use")
        }
    }
}
