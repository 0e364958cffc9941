import ChecklistModel
import ChecklistWire

/// STATS_REPORT in the vectors' `fields` shape: flat keys named as in the
/// SPEC.md section 6.10 table, `requests` and `errors` arrays, and the log
/// snapshot, live-sync, TLS, web and usage keys present exactly when their presence bit is set.
extension VectorJSON {
    static var statsHead: [(String, WritableKeyPath<StatsReport, UInt64>)] { [
        ("uptimeSeconds", \.uptimeSeconds), ("connectionsOpen", \.connectionsOpen),
        ("connectionsTotal", \.connectionsTotal), ("connectionsRejected", \.connectionsRejected),
        ("connectionsIdleClosed", \.connectionsIdleClosed),
        ("connectionsDroppedForOutput", \.connectionsDroppedForOutput),
        ("readPauses", \.readPauses), ("inFlightPauses", \.inFlightPauses),
        ("bytesIn", \.bytesIn), ("bytesOut", \.bytesOut),
        ("latencyCount", \.latency.count), ("latencyP50Micros", \.latency.p50Micros),
        ("latencyP90Micros", \.latency.p90Micros), ("latencyP99Micros", \.latency.p99Micros),
        ("latencyP999Micros", \.latency.p999Micros), ("latencyMaxMicros", \.latency.maxMicros),
        ("lists", \.lists), ("items", \.items),
    ] }

    /// The live-sync keys, present exactly when presence bit 2 is set.
    static var statsSync: [(String, WritableKeyPath<StatsReport.SyncStatus, UInt64>)] { [
        ("syncSubscribers", \.subscribers), ("syncChangesPublished", \.changesPublished),
        ("syncPushesDelivered", \.pushesDelivered), ("syncSubscribersDropped", \.subscribersDropped),
        ("syncRetainedChanges", \.retainedChanges), ("syncRetainedBytes", \.retainedBytes),
    ] }

    /// The TLS keys, present exactly when presence bit 3 is set.
    static var statsTLS: [(String, WritableKeyPath<StatsReport.TLSStatus, UInt64>)] { [
        ("tlsHandshakes", \.handshakes), ("tlsNotTLS", \.notTLS), ("tlsHandshakeFailures", \.handshakeFailures),
        ("tlsHandshakesTruncated", \.handshakesTruncated), ("tlsHandshakeTimeouts", \.handshakeTimeouts),
        ("tlsRecordErrors", \.recordErrors), ("tlsOnPlainPort", \.tlsOnPlainPort),
    ] }

    /// The web port's keys, present exactly when presence bit 4 is set.
    static var statsWeb: [(String, WritableKeyPath<StatsReport.WebSocketStatus, UInt64>)] { [
        ("webUpgrades", \.upgrades), ("webHandshakesRefused", \.handshakesRefused), ("webOriginsRefused", \.originsRefused),
        ("webClosedProtocolError", \.closedProtocolError), ("webClosedUnsupportedData", \.closedUnsupportedData),
        ("webClosedInvalidPayload", \.closedInvalidPayload), ("webClosedMessageTooBig", \.closedMessageTooBig),
        ("webPingTimeouts", \.pingTimeouts),
    ] }

    static func json(_ m: StatsReport) -> JSONValue {
        var o: [String: JSONValue] = [:]
        for (key, path) in statsHead { o[key] = .number(m[keyPath: path]) }
        o["requests"] = .array(m.requests.map {
            .object(["type": .number(UInt64($0.type.rawValue)), "requests": .number($0.requests), "errors": .number($0.errors)])
        })
        o["errors"] = .array(m.errors.map { .object(["code": .number(UInt64($0.code.rawValue)), "count": .number($0.count)]) })
        if let log = m.log {
            o["logLastLSN"] = .number(log.lastLSN)
            o["logDurableLSN"] = .number(log.durableLSN)
            o["logSegments"] = .number(log.segments)
            o["logFailed"] = .bool(log.failed)
        }
        if let snapshot = m.snapshot {
            o["snapshotLSN"] = .number(snapshot.lsn)
            o["snapshotTime"] = .number(snapshot.time)
            o["snapshotBytes"] = .number(snapshot.bytes)
        }
        if let sync = m.sync {
            for (key, path) in statsSync { o[key] = .number(sync[keyPath: path]) }
        }
        if let tls = m.tls {
            for (key, path) in statsTLS { o[key] = .number(tls[keyPath: path]) }
        }
        if let web = m.webSocket {
            for (key, path) in statsWeb { o[key] = .number(web[keyPath: path]) }
        }
        if let usage = m.usage {
            o["usageLists"] = .number(usage.lists)
            o["usageItems"] = .number(usage.items)
            o["usageBytes"] = .number(usage.bytes)
            if let quota = usage.quotaLists { o["quotaLists"] = .number(quota) }
            if let quota = usage.quotaItems { o["quotaItems"] = .number(quota) }
            if let quota = usage.quotaBytes { o["quotaBytes"] = .number(quota) }
        }
        return .object(o)
    }

    static func statsReport(_ f: JSONValue) throws -> StatsReport {
        var m = StatsReport()
        for (key, path) in statsHead { m[keyPath: path] = try f.uint(key) }
        m.requests = try f.array("requests").map {
            StatsReport.TypeCount(type: MessageType(rawValue: UInt8(try $0.uint("type"))),
                                  requests: try $0.uint("requests"), errors: try $0.uint("errors"))
        }
        m.errors = try f.array("errors").map {
            StatsReport.CodeCount(code: ChecklistError.Code(rawValue: UInt16(try $0.uint("code"))), count: try $0.uint("count"))
        }
        if f["logLastLSN"] != nil {
            m.log = StatsReport.LogStatus(lastLSN: try f.uint("logLastLSN"), durableLSN: try f.uint("logDurableLSN"),
                                          segments: try f.uint("logSegments"), failed: try f.bool("logFailed"))
        }
        if f["snapshotLSN"] != nil {
            m.snapshot = StatsReport.SnapshotStatus(lsn: try f.uint("snapshotLSN"), time: try f.int("snapshotTime"),
                                                    bytes: try f.uint("snapshotBytes"))
        }
        if f["syncSubscribers"] != nil {
            var sync = StatsReport.SyncStatus(subscribers: 0, changesPublished: 0, pushesDelivered: 0, subscribersDropped: 0,
                                              retainedChanges: 0, retainedBytes: 0)
            for (key, path) in statsSync { sync[keyPath: path] = try f.uint(key) }
            m.sync = sync
        }
        if f["tlsHandshakes"] != nil {
            var tls = StatsReport.TLSStatus()
            for (key, path) in statsTLS { tls[keyPath: path] = try f.uint(key) }
            m.tls = tls
        }
        if f["webUpgrades"] != nil {
            var web = StatsReport.WebSocketStatus()
            for (key, path) in statsWeb { web[keyPath: path] = try f.uint(key) }
            m.webSocket = web
        }
        if f["usageLists"] != nil {
            m.usage = StatsReport.UsageStatus(lists: try f.uint("usageLists"), items: try f.uint("usageItems"),
                                              bytes: try f.uint("usageBytes"), quotaLists: try f.optionalUInt("quotaLists"),
                                              quotaItems: try f.optionalUInt("quotaItems"),
                                              quotaBytes: try f.optionalUInt("quotaBytes"))
        }
        return m
    }
}
