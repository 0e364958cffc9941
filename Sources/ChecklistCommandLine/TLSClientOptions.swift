import ChecklistTLS
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The TLS options every client tool takes (`checklist`,
/// `checklist-conformance`, `checklist-bench`), parsed the same way
/// everywhere:
///
/// - `--tls`: speak TLS, trusting the system's store;
/// - `--tls-ca FILE`: trust this CA instead;
/// - `--tls-server-name NAME`: the name to send (SNI) and verify;
/// - `--tls-cert FILE --tls-key FILE`: a client certificate (mutual TLS).
///
/// Any `--tls-*` option implies `--tls` (it only ever asks for more TLS,
/// never for less). With TLS on there is no plaintext fallback.
/// `init(environment:)` reads the same settings from `CHECKLIST_TLS`,
/// `CHECKLIST_TLS_CA`, `CHECKLIST_TLS_SERVER_NAME`, `CHECKLIST_TLS_CERT`
/// and `CHECKLIST_TLS_KEY`, for the tools that read `CHECKLIST_*` variables.
public struct TLSClientOptions: Sendable, Hashable {
    /// The flag that turns TLS on.
    public static let flag = "--tls"
    /// The options that take a value, in the order of the help texts.
    public static let valueOptions = ["--tls-ca", "--tls-server-name", "--tls-cert", "--tls-key"]
    /// The options as the parser and the help know them, in the order above.
    public static let specs: [OptionSpec] = [
        .flag("--tls", "speak TLS, verifying the server's certificate against the\nsystem's trust store"),
        .value("--tls-ca", "FILE", "trust the CA certificates of this PEM file instead"),
        .value("--tls-server-name", "NAME", "the name the server's certificate must carry (also sent\n"
               + "as SNI); default: the host of the server's address"),
        .value("--tls-cert", "FILE", "a client certificate (PEM, may hold its chain) for mutual TLS"),
        .value("--tls-key", "FILE", "the client certificate's private key (PEM)\n"
               + "(any --tls-* option implies --tls; there is no plaintext fallback)"),
    ]
    /// The help's note on the variables, for the tools that read them.
    public static let environmentHelp = "The TLS options default to $CHECKLIST_TLS (1 or 0), $CHECKLIST_TLS_CA,\n"
        + "$CHECKLIST_TLS_SERVER_NAME, $CHECKLIST_TLS_CERT and $CHECKLIST_TLS_KEY."
    /// The environment variable of each option.
    public static let environmentNames = [
        "--tls": "CHECKLIST_TLS", "--tls-ca": "CHECKLIST_TLS_CA", "--tls-server-name": "CHECKLIST_TLS_SERVER_NAME",
        "--tls-cert": "CHECKLIST_TLS_CERT", "--tls-key": "CHECKLIST_TLS_KEY",
    ]

    /// `--tls` was given (or implied).
    public private(set) var enabled = false
    public private(set) var caFile: String?
    public private(set) var serverName: String?
    public private(set) var certificateFile: String?
    public private(set) var privateKeyFile: String?

    /// No TLS.
    public init() {}

    /// The settings of the `CHECKLIST_TLS*` variables: `CHECKLIST_TLS=1`
    /// turns TLS on (`0` or empty: off); the others, when set and not
    /// empty, are the values of their options.
    public init(environment: [String: String]) throws(UsageError) {
        switch environment["CHECKLIST_TLS"] ?? "" {
        case "", "0": break
        case "1": enabled = true
        case let other: throw UsageError("CHECKLIST_TLS: '\(other)' is neither 1 nor 0")
        }
        for name in Self.valueOptions {
            if let value = environment[Self.environmentNames[name]!], !value.isEmpty { _ = set(name, value) }
        }
    }

    /// The `CHECKLIST_TLS*` variables of this process that are set, for
    /// `init(environment:)`.
    public static func processEnvironment() -> [String: String] {
        var environment: [String: String] = [:]
        for name in environmentNames.values {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        return environment
    }

    /// Takes option `name` (`--tls`, with a nil value, or one of
    /// `valueOptions`); false when `name` is no TLS option.
    public mutating func set(_ name: String, _ value: String?) -> Bool {
        switch name {
        case "--tls": break
        case "--tls-ca": caFile = value
        case "--tls-server-name": serverName = value
        case "--tls-cert": certificateFile = value
        case "--tls-key": privateKeyFile = value
        default: return false
        }
        enabled = true
        return true
    }

    /// The options given on `parsed`'s command line (no variables).
    public init(_ parsed: ParsedCommandLine) {
        for spec in Self.specs where parsed.has(spec.name) {
            _ = set(spec.name, parsed.string(spec.name))
        }
    }

    /// Whether any TLS option was given on `parsed`'s command line.
    public static func given(_ parsed: ParsedCommandLine) -> Bool {
        specs.contains { parsed.has($0.name) }
    }

    /// These options with `other`'s on top (command-line options over the
    /// environment's).
    public func overridden(by other: TLSClientOptions) -> TLSClientOptions {
        var merged = self
        merged.enabled = enabled || other.enabled
        merged.caFile = other.caFile ?? caFile
        merged.serverName = other.serverName ?? serverName
        merged.certificateFile = other.certificateFile ?? certificateFile
        merged.privateKeyFile = other.privateKeyFile ?? privateKeyFile
        return merged
    }

    /// The client configuration, or nil without TLS. Checks the
    /// combination only; the files are read by `TLSContext(client:)`.
    public func configuration() throws(UsageError) -> TLSClientConfiguration? {
        guard enabled else { return nil }
        switch (certificateFile, privateKeyFile) {
        case (_?, nil): throw UsageError("--tls-cert needs --tls-key (the client certificate's private key)")
        case (nil, _?): throw UsageError("--tls-key needs --tls-cert (the client certificate)")
        default: break
        }
        if serverName == "" { throw UsageError("--tls-server-name must not be empty") }
        return TLSClientConfiguration(caFile: caFile, serverName: serverName, certificateFile: certificateFile,
                                      privateKeyFile: privateKeyFile)
    }

    /// Like `configuration()`, and loads the files once (a client context),
    /// so that a missing or bad file is a usage error before any connection.
    public func checkedConfiguration() throws(UsageError) -> TLSClientConfiguration? {
        guard let configuration = try configuration() else { return nil }
        do throws(TLSError) {
            _ = try TLSContext(client: configuration)
        } catch {
            throw UsageError(error.message)
        }
        return configuration
    }
}
