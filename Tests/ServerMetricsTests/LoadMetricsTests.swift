@testable import ChecklistServer
import ChecklistLog
import ChecklistLatency
import ChecklistModel
import ChecklistWire
import Synchronization
import Testing

/// The pieces behind STATS, the metrics endpoint, the in-flight limit and
/// the event log, without a socket.
@Suite(.timeLimit(.minutes(10))) struct LoadMetricsTests {
    /// Every quantile is within one bucket (6.25%) above the exact value,
    /// never below it, and capped at the maximum.
    @Test func latencyBucketsAreTightAndNeverUnderstate() {
        var buckets = LatencyHistogram(precisionBits: 5)
        var samples: [UInt64] = []
        var x: UInt64 = 12345
        for _ in 0..<20_000 {
            x = x &* 6364136223846793005 &+ 1442695040888963407
            let v = (x >> 40) % 50_000_000 + 1
            samples.append(v)
            buckets.record(nanos: v)
        }
        samples.sort()
        for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
            let exact = samples[max(0, Int((q * Double(samples.count)).rounded(.up)) - 1)]
            let got = buckets.quantile(q)
            #expect(got >= exact && Double(got) <= Double(exact) * 1.0625 + 1, "q \(q): \(got) for \(exact)")
        }
        #expect(buckets.quantile(1.0) == samples.last)
        #expect(LatencyHistogram(precisionBits: 5).quantile(0.5) == 0)
        for bits in [5, 7] {
            let histogram = LatencyHistogram(precisionBits: bits)
            for v: UInt64 in [0, 1, 31, 32, 33, 127, 128, 129, 1000, 1 << 40, .max] {
                let i = histogram.index(of: v)
                #expect(histogram.upperEdge(of: i) >= v)
                #expect(i == 0 || histogram.upperEdge(of: i - 1) < v)
            }
        }
    }

    /// A batch of PATCH answers counted at once is what counting each of
    /// them is: requests, errors by type and by code, latency samples.
    @Test func requestsCountedTogetherAreRequestsCountedOneByOne() {
        let together = RequestMetrics()
        let oneByOne = RequestMetrics()
        let outcomes: [ChecklistError.Code?] = [nil, .conflict, nil, nil, .badField, .conflict, nil]
        let nanos: UInt64 = 183_000
        together.recordRequests(type: .patch, count: outcomes.count, errors: outcomes.compactMap { $0 }, nanos: nanos)
        for code in outcomes { oneByOne.recordRequest(type: .patch, errorCode: code, nanos: nanos) }
        let (a, b) = (together.snapshot, oneByOne.snapshot)
        #expect(a.requests == b.requests && a.requests[Int(MessageType.patch.rawValue)] == 7)
        #expect(a.requestErrors == b.requestErrors && a.requestErrors[Int(MessageType.patch.rawValue)] == 3)
        #expect(a.errorsByCode == b.errorsByCode)
        #expect(a.latency.count == 7 && b.latency.count == 7)
        #expect(a.latency.quantile(0.5) == b.latency.quantile(0.5) && a.latency.maxNanos == nanos)
        together.recordRequests(type: .patch, count: 0, errors: [], nanos: 1)
        #expect(together.snapshot.latency.count == 7 && together.snapshot.latency.minNanos == nanos)
    }

    /// Answers count as in flight until the bytes after them have left the
    /// connection's output.
    @Test func unsentAnswersFollowTheBytesSent() {
        var answers = UnsentAnswers()
        answers.wrote(bytes: 100, answers: 3)
        answers.wrote(bytes: 50, answers: 2)
        answers.wrote(bytes: 10, answers: 0)  // a connection-level error
        answers.update(pendingOutput: 160)
        #expect(answers.count == 5)
        answers.update(pendingOutput: 61)
        #expect(answers.count == 5)
        answers.update(pendingOutput: 60)
        #expect(answers.count == 2)
        answers.update(pendingOutput: 0)
        #expect(answers.count == 0)
        // Output written by others only delays the count, and it is exact once the output is empty.
        answers.wrote(bytes: 20, answers: 1)
        answers.update(pendingOutput: 500)
        #expect(answers.count == 1)
        answers.update(pendingOutput: 0)
        #expect(answers.count == 0)
    }

    @Test func logLinesAreKeyValueAndRateLimited() {
        let lines = Mutex<[String]>([])
        let log = ServerLog(level: .info, maxLinesPerSecond: 3) { line in lines.withLock { $0.append(line) } }
        log.debug("hidden", ["a": 1])
        log.info("start", ["address": "127.0.0.1:7420", "note": "two words", "quote": "a\"b"])
        for i in 0..<10 { log.warn("slow_request", ["n": i]) }
        let written = lines.withLock { $0 }
        #expect(written.count == 4)
        let start = written[0]
        #expect(start.hasPrefix("level=info event=start ts="))
        #expect(start.hasSuffix(" address=127.0.0.1:7420 note=\"two words\" quote=\"a\\\"b\"\n"))
        #expect(written[1].hasPrefix("level=warn event=slow_request ") && written[1].hasSuffix(" n=0\n"))
        #expect(LogLevel(name: "warn") == .warn && LogLevel(name: "loud") == nil)
    }

    @Test func prometheusTextHasEveryFigure() {
        var r = StatsReport()
        r.uptimeSeconds = 5
        r.connectionsOpen = 3
        r.requests = [.init(type: .getPage, requests: 10, errors: 2), .init(type: MessageType(rawValue: 0x7F), requests: 1, errors: 1)]
        r.errors = [.init(code: .notFound, count: 2), .init(code: .unknownMessage, count: 1)]
        r.latency.count = 11
        r.latency.p99Micros = 1_250
        r.log = .init(lastLSN: 9, durableLSN: 8, segments: 1, failed: false)
        let text = PrometheusText.render(r)
        for line in ["checklistd_uptime_seconds 5", "checklistd_connections_open 3",
                     "checklistd_requests_total{type=\"GET_PAGE\"} 10", "checklistd_requests_total{type=\"0x7F\"} 1",
                     "checklistd_request_errors_total{type=\"GET_PAGE\"} 2", "checklistd_errors_total{code=\"NOT_FOUND\"} 2",
                     "checklistd_request_duration_seconds{quantile=\"0.99\"} 0.001250",
                     "checklistd_request_duration_seconds_count 11", "checklistd_log_durable_lsn 8", "checklistd_log_failed 0"] {
            #expect(text.contains("\n" + line + "\n"), "missing \(line)")
        }
        #expect(!text.contains("snapshot"))
        // Every sample line belongs to a declared metric.
        let declared = Set(text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] })
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let name = line.prefix { $0 != "{" && $0 != " " }
            #expect(declared.contains(name) || declared.contains(Substring(name.replacingOccurrences(of: "_count", with: ""))),
                    "\(name) is not declared")
        }
    }

    @Test func prometheusTextHasTheTLSFiguresWhenThereIsATLSPort() {
        var r = StatsReport()
        #expect(!PrometheusText.render(r).contains("tls"))
        var tls = StatsReport.TLSStatus()
        tls.handshakes = 7
        tls.notTLS = 2
        tls.handshakeTimeouts = 1
        tls.tlsOnPlainPort = 3
        r.tls = tls
        let text = PrometheusText.render(r)
        for line in ["checklistd_tls_handshakes_total 7", "checklistd_tls_closed_total{reason=\"not_tls\"} 2",
                     "checklistd_tls_closed_total{reason=\"handshake_timeout\"} 1",
                     "checklistd_tls_closed_total{reason=\"handshake_failed\"} 0", "checklistd_tls_on_plain_port_total 3"] {
            #expect(text.contains("\n" + line + "\n"), "missing \(line)")
        }
    }

    @Test func httpHeadEndIsFound() {
        func end(_ text: String) -> Int? { Array(text.utf8).withUnsafeBytes { MetricsHTTPHandler.endOfHead(in: $0) } }
        #expect(end("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n") == 34)
        #expect(end("GET /metrics HTTP/1.1\r\nHost: x\r\n") == nil)
        #expect(end("") == nil)
    }
}

/// The idle timeout's decisions, without a connection.
@Suite(.timeLimit(.minutes(1))) struct IdleTimeoutTests {
    @Test func verdicts() {
        let timeout = IdleTimeout(limit: .seconds(30))
        #expect(timeout.verdict(quiet: .seconds(29), outputWaiting: nil, pendingOutput: 0) == .keep)
        #expect(timeout.verdict(quiet: .seconds(30), outputWaiting: nil, pendingOutput: 0) == .idle(.seconds(30)))
        // Output still owed is not idle, however quiet the client.
        #expect(timeout.verdict(quiet: .seconds(40), outputWaiting: .seconds(10), pendingOutput: 5) == .keep)
        // Owed output untaken for the whole timeout: stalled.
        #expect(timeout.verdict(quiet: .seconds(40), outputWaiting: .seconds(30), pendingOutput: 5)
                == .outputStalled(.seconds(30)))
        #expect(IdleTimeout(limit: nil).verdict(quiet: .seconds(1000), outputWaiting: .seconds(1000), pendingOutput: 1) == .keep)
    }
}
