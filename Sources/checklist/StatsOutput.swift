import ChecklistClient

/// `checklist stats`: the STATS_REPORT as a JSON document or a short report.
extension JSON {
    static func stats(_ r: StatsReport, askedUsage: Bool = false) -> JSON {
        .object([
            ("uptimeSeconds", .uint(r.uptimeSeconds)),
            ("connections", .object([
                ("open", .uint(r.connectionsOpen)),
                ("total", .uint(r.connectionsTotal)),
                ("rejected", .uint(r.connectionsRejected)),
                ("idleClosed", .uint(r.connectionsIdleClosed)),
                ("droppedForOutput", .uint(r.connectionsDroppedForOutput)),
            ])),
            ("readPauses", .uint(r.readPauses)),
            ("inFlightPauses", .uint(r.inFlightPauses)),
            ("bytesIn", .uint(r.bytesIn)),
            ("bytesOut", .uint(r.bytesOut)),
            ("requests", .array(r.requests.map {
                .object([("type", .uint(UInt64($0.type.rawValue))), ("name", .string($0.type.name)),
                         ("requests", .uint($0.requests)), ("errors", .uint($0.errors))])
            })),
            ("errors", .array(r.errors.map {
                .object([("code", .uint(UInt64($0.code.rawValue))), ("name", .string($0.code.name)),
                         ("count", .uint($0.count))])
            })),
            ("latencyMicros", .object([
                ("count", .uint(r.latency.count)), ("p50", .uint(r.latency.p50Micros)),
                ("p90", .uint(r.latency.p90Micros)), ("p99", .uint(r.latency.p99Micros)),
                ("p999", .uint(r.latency.p999Micros)), ("max", .uint(r.latency.maxMicros)),
            ])),
            ("lists", .uint(r.lists)),
            ("items", .uint(r.items)),
            ("log", r.log.map {
                .object([("lastLSN", .uint($0.lastLSN)), ("durableLSN", .uint($0.durableLSN)),
                         ("segments", .uint($0.segments)), ("failed", .bool($0.failed))])
            } ?? .null),
            ("snapshot", r.snapshot.map {
                .object([("lsn", .uint($0.lsn)), ("time", .int($0.time)), ("bytes", .uint($0.bytes))])
            } ?? .null),
            ("sync", r.sync.map {
                .object([("subscribers", .uint($0.subscribers)), ("changesPublished", .uint($0.changesPublished)),
                         ("pushesDelivered", .uint($0.pushesDelivered)), ("subscribersDropped", .uint($0.subscribersDropped)),
                         ("retainedChanges", .uint($0.retainedChanges)), ("retainedBytes", .uint($0.retainedBytes))])
            } ?? .null),
        ] + (askedUsage ? [("usage", r.usage.map(usage) ?? .null)] : []))
    }

    /// `checklist stats --usage`: the namespace's counts and quotas (nil: none set).
    private static func usage(_ u: StatsReport.UsageStatus) -> JSON {
        func quota(_ q: UInt64?) -> JSON { q.map { .uint($0) } ?? .null }
        return .object([("lists", .uint(u.lists)), ("items", .uint(u.items)), ("bytes", .uint(u.bytes)),
                        ("quotas", .object([("lists", quota(u.quotaLists)), ("items", quota(u.quotaItems)),
                                            ("bytes", quota(u.quotaBytes))]))])
    }
}

extension TextOutput {
    static func stats(_ r: StatsReport, server: String, askedUsage: Bool = false) -> String {
        var lines = [
            "\(server), up \(duration(r.uptimeSeconds))",
            "connections  \(r.connectionsOpen) open, \(r.connectionsTotal) since start, \(r.connectionsRejected) rejected, "
                + "\(r.connectionsIdleClosed) closed idle, \(r.connectionsDroppedForOutput) dropped at the output limit",
            "pauses       \(r.readPauses) for unread answers, \(r.inFlightPauses) at max in flight",
            "traffic      \(r.bytesIn) bytes in, \(r.bytesOut) bytes out",
            "latency      p50 \(millis(r.latency.p50Micros)), p90 \(millis(r.latency.p90Micros)), "
                + "p99 \(millis(r.latency.p99Micros)), p99.9 \(millis(r.latency.p999Micros)), "
                + "max \(millis(r.latency.maxMicros)) ms over \(r.latency.count) requests",
            "store        \(r.lists) lists, \(r.items) items",
        ]
        if let log = r.log {
            lines.append("log          LSN \(log.lastLSN) appended, \(log.durableLSN) durable, \(log.segments) segments"
                         + (log.failed ? ", FAILED" : ""))
        } else {
            lines.append("log          none")
        }
        if let snapshot = r.snapshot {
            lines.append("snapshot     up to LSN \(snapshot.lsn), \(snapshot.bytes) bytes, written \(dateTime(snapshot.time))")
        } else {
            lines.append("snapshot     none")
        }
        if let sync = r.sync {
            lines.append("live sync    \(sync.subscribers) subscribers, \(sync.changesPublished) changes published, "
                         + "\(sync.pushesDelivered) pushes, \(sync.subscribersDropped) dropped; "
                         + "\(sync.retainedChanges) changes (\(sync.retainedBytes) bytes) retained")
        }
        if askedUsage {
            lines.append(r.usage.map(usage) ?? "namespace    not reported by this server")
        }
        if !r.requests.isEmpty {
            lines.append("")
            lines.append(table(header: ["TYPE", "REQUESTS", "ERRORS"], rightAligned: [1, 2],
                               rows: r.requests.map { [$0.type.name, String($0.requests), String($0.errors)] }))
        }
        if !r.errors.isEmpty {
            lines.append("")
            lines.append(table(header: ["ERROR", "CODE", "COUNT"], rightAligned: [1, 2],
                               rows: r.errors.map { [$0.code.name, String($0.code.rawValue), String($0.count)] }))
        }
        return lines.joined(separator: "\n")
    }

    /// `namespace    3 lists of 10, 1200 items, 20480 bytes of 1048576`: each
    /// count with its quota when one is set.
    private static func usage(_ u: StatsReport.UsageStatus) -> String {
        func figure(_ count: UInt64, _ unit: String, _ quota: UInt64?) -> String {
            "\(count) \(unit)" + (quota.map { " of \($0)" } ?? "")
        }
        return "namespace    " + [figure(u.lists, "lists", u.quotaLists), figure(u.items, "items", u.quotaItems),
                                  figure(u.bytes, "bytes", u.quotaBytes)].joined(separator: ", ")
    }

    /// `2026-01-05 10:00:00 UTC`.
    private static func dateTime(_ seconds: Int64) -> String {
        let inDay = (seconds % 86_400 + 86_400) % 86_400
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(Values.formatDate(seconds)) \(two(inDay / 3600)):\(two(inDay / 60 % 60)):\(two(inDay % 60)) UTC"
    }

    /// `0.250` for 250 microseconds.
    private static func millis(_ micros: UInt64) -> String {
        let fraction = String(micros % 1000)
        return "\(micros / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// `2d 3h 4m 5s`, leaving out leading zero units.
    private static func duration(_ seconds: UInt64) -> String {
        let parts: [(UInt64, String)] = [(seconds / 86400, "d"), (seconds / 3600 % 24, "h"), (seconds / 60 % 60, "m"), (seconds % 60, "s")]
        let shown = parts.drop { $0.0 == 0 && $0.1 != "s" }
        return shown.map { "\($0.0)\($0.1)" }.joined(separator: " ")
    }
}
