import ChecklistStorage
import ChecklistModel
import ChecklistWire

/// The figures of a STATS_REPORT in the Prometheus text exposition format
/// (version 0.0.4), as served at `--metrics-port`. Metric names are
/// `checklistd_*`; Benchmarks/README.md and `checklistd --help` list them.
enum PrometheusText {
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// - Parameter cache: the list cache's figures (PostgreSQL), shown as
    ///   `checklistd_cache_*`.
    /// - Parameter refusals: access control's refused authentications by
    ///   reason, shown as `checklistd_auth_refused_total`.
    static func render(_ r: StatsReport, cache: ListCache.Status? = nil,
                       refusals: [(reason: String, count: UInt64)]? = nil) -> String {
        var out = ""
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            out += "# HELP checklistd_\(name) \(help)\n# TYPE checklistd_\(name) \(type)\n"
            for sample in samples {
                out += "checklistd_\(name)\(sample.labels.isEmpty ? "" : "{\(sample.labels)}") \(sample.value)\n"
            }
        }
        func single(_ name: String, _ type: String, _ help: String, _ value: UInt64) {
            metric(name, type, help, [("", String(value))])
        }
        single("uptime_seconds", "gauge", "Seconds since the server started.", r.uptimeSeconds)
        single("connections_open", "gauge", "Connections being served now.", r.connectionsOpen)
        single("connections_total", "counter", "Connections accepted and served.", r.connectionsTotal)
        single("connections_rejected_total", "counter", "Connections turned away at --max-connections.", r.connectionsRejected)
        single("connections_idle_closed_total", "counter", "Connections closed by --idle-timeout (quiet, or not reading).",
               r.connectionsIdleClosed)
        single("connections_dropped_output_total", "counter",
               "Connections aborted because their unread answers passed --max-output-bytes.", r.connectionsDroppedForOutput)
        single("read_pauses_total", "counter",
               "Times a connection stopped being read because its unread answers passed the high-water mark.", r.readPauses)
        single("in_flight_pauses_total", "counter",
               "Times a connection's requests were held back at --max-in-flight.", r.inFlightPauses)
        single("received_bytes_total", "counter", "Bytes read from client sockets.", r.bytesIn)
        single("sent_bytes_total", "counter", "Bytes written to client sockets.", r.bytesOut)
        metric("requests_total", "counter", "Requests handled, by message type.",
               r.requests.map { ("type=\"\($0.type.name)\"", String($0.requests)) })
        metric("request_errors_total", "counter", "Requests answered with ERROR, by message type.",
               r.requests.map { ("type=\"\($0.type.name)\"", String($0.errors)) })
        metric("errors_total", "counter", "ERROR frames sent, by error code (connection-level ones included).",
               r.errors.map { ("code=\"\($0.code.name)\"", String($0.count)) })
        let quantiles: [(String, UInt64)] = [("0.5", r.latency.p50Micros), ("0.9", r.latency.p90Micros),
                                             ("0.99", r.latency.p99Micros), ("0.999", r.latency.p999Micros)]
        metric("request_duration_seconds", "summary", "Time the server spent on a request, over all requests since start.",
               quantiles.map { ("quantile=\"\($0.0)\"", seconds(micros: $0.1)) })
        out += "checklistd_request_duration_seconds_count \(r.latency.count)\n"
        metric("request_duration_max_seconds", "gauge", "The longest a request took since start.",
               [("", seconds(micros: r.latency.maxMicros))])
        single("lists", "gauge", "Lists in the store, all namespaces.", r.lists)
        single("items", "gauge", "Items in the store, all namespaces.", r.items)
        if let log = r.log {
            single("log_last_lsn", "gauge", "Last log sequence number appended to the write-ahead log.", log.lastLSN)
            single("log_durable_lsn", "gauge", "Log records up to this sequence number are fsynced.", log.durableLSN)
            single("log_segments", "gauge", "Segment files of the write-ahead log.", log.segments)
            single("log_failed", "gauge", "1 when a log write or fsync failed (no more changes are accepted).", log.failed ? 1 : 0)
        }
        if let snapshot = r.snapshot {
            single("snapshot_lsn", "gauge", "The last snapshot holds every change up to this log sequence number.", snapshot.lsn)
            metric("snapshot_timestamp_seconds", "gauge", "When the last snapshot was finished (Unix time).",
                   [("", String(snapshot.time))])
            single("snapshot_bytes", "gauge", "Size of the last snapshot on disk.", snapshot.bytes)
        }
        if let tls = r.tls {
            single("tls_handshakes_total", "counter", "TLS handshakes completed.", tls.handshakes)
            metric("tls_closed_total", "counter", "Connections closed by the TLS layer, by reason.", [
                ("reason=\"not_tls\"", String(tls.notTLS)),
                ("reason=\"handshake_failed\"", String(tls.handshakeFailures)),
                ("reason=\"handshake_truncated\"", String(tls.handshakesTruncated)),
                ("reason=\"handshake_timeout\"", String(tls.handshakeTimeouts)),
                ("reason=\"record_error\"", String(tls.recordErrors)),
            ])
            single("tls_on_plain_port_total", "counter", "TLS handshakes refused on the plaintext port.", tls.tlsOnPlainPort)
        }
        if let web = r.webSocket {
            single("websocket_upgrades_total", "counter", "Upgrades to WebSocket accepted on the web port.", web.upgrades)
            metric("websocket_refused_total", "counter", "WebSocket upgrade requests refused, by reason.", [
                ("reason=\"bad_handshake\"", String(web.handshakesRefused)),
                ("reason=\"origin\"", String(web.originsRefused)),
            ])
            metric("websocket_closed_total", "counter", "WebSocket connections closed for breaking RFC 6455, by close code.", [
                ("code=\"1001\"", String(web.pingTimeouts)),
                ("code=\"1002\"", String(web.closedProtocolError)),
                ("code=\"1003\"", String(web.closedUnsupportedData)),
                ("code=\"1007\"", String(web.closedInvalidPayload)),
                ("code=\"1009\"", String(web.closedMessageTooBig)),
            ])
        }
        if let sync = r.sync {
            single("subscribers", "gauge", "Connections with at least one live-sync subscription.", sync.subscribers)
            single("changes_published_total", "counter", "Changes committed and offered to subscribers.", sync.changesPublished)
            single("pushes_delivered_total", "counter", "CHANGE pushes written to subscribers.", sync.pushesDelivered)
            single("subscribers_dropped_total", "counter", "Subscribers cut at their push buffer (SUBSCRIPTION_DROPPED).",
                   sync.subscribersDropped)
            single("retained_changes", "gauge", "Changes retained for CHANGES_SINCE and catch-up.", sync.retainedChanges)
            single("retained_change_bytes", "gauge", "Encoded size of the retained changes.", sync.retainedBytes)
        }
        if let cache {
            single("cache_max_bytes", "gauge", "The list cache's budget (--cache-bytes).", UInt64(cache.maxBytes))
            single("cache_resident_bytes", "gauge", "Estimated bytes of the lists whose rows are in memory.",
                   UInt64(cache.residentBytes))
            single("cache_resident_lists", "gauge", "Lists whose rows are in memory.", UInt64(cache.residentLists))
            single("cache_loads_total", "counter", "Lists loaded from the database into memory.", cache.loads)
            single("cache_load_failures_total", "counter", "List loads that failed (the request got UNAVAILABLE).",
                   cache.loadFailures)
            single("cache_evictions_total", "counter", "Lists whose rows were dropped from memory to stay within the budget.",
                   cache.evictions)
            metric("cache_load_seconds_total", "counter", "Time spent loading lists.",
                   [("", seconds(micros: cache.loadNanoseconds / 1000))])
            metric("cache_load_max_seconds", "gauge", "The longest a list load took since start.",
                   [("", seconds(micros: cache.maxLoadNanoseconds / 1000))])
            single("cache_parked_requests", "gauge", "Requests waiting for their lists to be loaded.", UInt64(cache.parked))
        }
        if let refusals {
            metric("auth_refused_total", "counter",
                   "Authentications refused (HELLO, or a connection whose token expired or was revoked), by reason.",
                   refusals.map { ("reason=\"\($0.reason)\"", String($0.count)) })
        }
        return out
    }

    /// Microseconds as seconds with six decimals, e.g. `0.000250`.
    static func seconds(micros: UInt64) -> String {
        let fraction = String(micros % 1_000_000)
        return "\(micros / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }
}
