import ChecklistLog
import ChecklistEventLoop
import ChecklistModel
import ChecklistStore

/// Everything `checklistd` can be told on its command line.
public struct ServerConfiguration: Sendable {
    /// Address to bind. Loopback by default.
    public var host: String = "127.0.0.1"
    /// Port to bind; 0 picks an ephemeral port.
    public var port: UInt16 = 7420
    /// Set: `port` speaks TLS (its certificate, key, optional client CA and
    /// handshake timeout); nil: `port` is plaintext.
    public var tls: TLSListenerSettings?
    /// With `tls`: a plaintext port beside the TLS one (0 picks one), on `plainHost`.
    public var plainPort: UInt16?
    /// Address of the plaintext port (`checklistd` makes it loopback unless `--insecure-bind`).
    public var plainHost: String = "127.0.0.1"
    /// Serve the web app and WebSocket (`/ws`) on this port of `host` (0
    /// picks one; TLS when `tls` is set); nil: no web port.
    public var webPort: UInt16?
    /// The `Origin`s allowed to open a WebSocket; empty: only the page's own.
    public var webAllowedOrigins: [String] = []
    /// The web port's WebSocket bounds (message size, ping interval).
    public var webSocket = WebSocketSettings()
    /// Directory holding the server's data.
    public var dataDirectory: String = "./data"
    /// Event-loop threads; 0 means one per core.
    public var threads: Int = 0
    /// Limits announced in HELLO_OK and enforced.
    public var limits: Limits = .default
    /// Most connections open at once; more are refused.
    public var maxConnections: Int = 10_000
    /// Pending output per connection past which reading from it pauses.
    public var outputHighWaterBytes: Int = 1 << 20
    /// Pending output per connection past which it is closed (a client that
    /// stopped reading).
    public var maxOutputBytes: Int = 64 << 20
    /// Name sent in HELLO_OK.
    public var serverName: String = "checklistd/1.0"
    /// The tokens clients must present in HELLO, each opening a namespace;
    /// nil serves everyone in `Namespace.default` (Protocol/SPEC.md section 2).
    public var accessControl: AccessControl?
    /// Requests a second per namespace (`--rate-limit`, `--rate-burst`); nil: no limit.
    public var rateLimit: RateLimiter.Settings?
    /// What each namespace may hold (`--quota-lists`, `--quota-items`, `--quota-bytes`).
    public var quotas = NamespaceQuotas()
    /// Close a connection that has sent nothing for this long (after an
    /// ERROR LIMIT_EXCEEDED `idleTimeout`), or that has taken none of the
    /// answers it is owed for this long; nil: never.
    public var idleTimeout: Duration?
    /// Requests of one connection worked on at once; further ones wait
    /// unread until answers go out (Protocol/SPEC.md section 4.1).
    public var maxInFlight: Int = 1024
    /// Serve the STATS figures in the Prometheus text format over HTTP on
    /// this port (0 picks one); nil: no metrics endpoint.
    public var metricsPort: UInt16?
    /// Address the metrics endpoint binds. Loopback by default.
    public var metricsHost: String = "127.0.0.1"
    /// Requests that take longer are logged (`event=slow_request`).
    public var slowRequestThreshold: Duration = .milliseconds(100)
    /// Log lines below this level are dropped.
    public var logLevel: LogLevel = .info
    /// Change retention and push buffering (live sync).
    public var liveSync = LiveSyncConfiguration()
    /// Bounds of EXPORT and IMPORT.
    public var snapshots = SnapshotTransferConfiguration()

    public init() {}
}
