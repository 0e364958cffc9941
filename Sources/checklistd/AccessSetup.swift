import ChecklistJWT
import ChecklistServer
import Foundation

/// `--tokens`, `--auth-keys`, `--insecure-bind` and SIGHUP: how checklistd
/// sets up access control and says what it runs with.
enum AccessSetup {
    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    /// Reads the tokens file, or checks that serving without access control
    /// is allowed on the host asked for. Starts no thread (it runs before
    /// the signal watcher blocks signals).
    static func start(_ options: Options) throws -> AccessControl? {
        let host = options.configuration.host
        let verifier = try startVerifier(options)
        guard let path = options.tokensFile else {
            if let verifier { return AccessControl(table: TokenTable(), verifier: verifier) }
            // Client certificates (mutual TLS) are access control too: only holders get in.
            let mutualTLS = options.tlsFiles?.clientCAFile != nil
            if !AccessControl.isLoopback(host: host) && !options.insecureBind && !mutualTLS {
                throw Refusal(description: """
                    refusing to listen on \(host) without access control: anyone who can reach it \
                    could read and change every list. Give --tokens FILE, --auth-keys FILE (or --tls-client-ca FILE), \
                    or --insecure-bind to do it anyway.
                    """)
            }
            log("no --tokens: running WITHOUT access control; every client shares the namespace \"default\"")
            return nil
        }
        let table: TokenTable
        do {
            table = try AccessControl(path: path).tokens
        } catch {
            throw Refusal(description: "tokens file \(path): \(error)")
        }
        let accessControl = AccessControl(table: table, path: path, verifier: verifier)
        let tokens = accessControl.tokens
        let certificates = tokens.certificateCount > 0 ? " and \(tokens.certificateCount) certificate subjects" : ""
        log("access control: \(tokens.count) tokens\(certificates) for \(tokens.namespaceCount) namespaces from \(path); SIGHUP reloads it")
        if tokens.count == 0 && tokens.certificateCount == 0 && verifier == nil {
            log("warning: \(path) holds no tokens: every HELLO will be refused")
        }
        warnIfReadableByOthers(path)
        return accessControl
    }

    /// The signed-token verifier of `--auth-keys`, if given.
    private static func startVerifier(_ options: Options) throws -> TokenVerifier? {
        guard let path = options.authKeysFile else { return nil }
        let verifier: TokenVerifier
        do {
            verifier = try TokenVerifier(path: path, expectations: options.authExpectations)
        } catch {
            throw Refusal(description: "signing keys \(path): \(error)")
        }
        let e = options.authExpectations
        log("signed tokens: \(verifier.keys.count) keys (\(verifier.keys.summary)) from \(path); namespace from claim "
            + "\(e.namespaceClaim), issuer \(e.issuer ?? "any"), audience \(e.audience ?? "any"), leeway \(e.leewaySeconds) s; "
            + "SIGHUP reloads it")
        if verifier.keys.count == 0 { log("warning: \(path) holds no keys: every signed token will be refused") }
        return verifier
    }

    /// The SIGHUP action: reload the tokens file, keeping the old tokens if
    /// the new file cannot be used.
    static func reload(_ accessControl: AccessControl?) {
        if let verifier = accessControl?.verifier, let keysPath = verifier.path {
            do {
                let keys = try accessControl!.reloadKeys()
                log("reloaded \(keys.count) signing keys (\(keys.summary)) from \(keysPath)")
            } catch {
                log("cannot reload \(keysPath): \(error); keeping the \(verifier.keys.count) signing keys in use")
            }
        }
        guard let accessControl, let path = accessControl.path else {
            if accessControl?.verifier == nil { log("SIGHUP: no --tokens file to reload") }
            return
        }
        do {
            let tokens = try accessControl.reload()
            log("reloaded \(tokens.count) tokens for \(tokens.namespaceCount) namespaces from \(path)")
        } catch {
            log("cannot reload \(path): \(error); keeping the \(accessControl.tokens.count) tokens in use")
        }
    }

    private static func warnIfReadableByOthers(_ path: String) {
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & (S_IRWXG | S_IRWXO) != 0 {
            log("warning: \(path) is readable by other users (chmod 600 it): it holds secrets")
        }
    }

    /// One line on stderr, unbuffered.
    static func log(_ line: String) {
        FileHandle.standardError.write(Data("checklistd: \(line)\n".utf8))
    }
}
