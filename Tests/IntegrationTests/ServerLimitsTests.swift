import ChecklistClient
import ChecklistModel
import ChecklistSocket
import ChecklistTesting
import ChecklistWire
import Foundation
import Testing

/// The load limits of Protocol/SPEC.md section 4.1 against the real server,
/// STATS and its Prometheus twin, and the log lines they leave.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct ServerLimitsTests {
    /// A client that pipelines 300 requests for 1000-row pages of 100-byte
    /// rows (about 31 MB of answers, far more than the high-water mark and
    /// the kernel buffers hold) and reads nothing: the server stops reading
    /// it once its unsent answers pass the high-water mark, instead of
    /// producing all of them; when the client reads, every answer arrives,
    /// in order, and the connection was never dropped.
    @Test func backPressureStopsReadingAClientThatDoesNotRead() async throws {
        // Debug logs tell when the server stops taking a connection's requests.
        let server = try TestServer.start(["--log-level", "debug"])
        defer { server.stop() }
        let list = try await makeWideList(on: server)
        let port = server.port
        let process = server.process
        let requests = 300
        let seen = try await BlockingWork.run { () throws -> (paused: Bool, pagesHandled: UInt64, wrong: [String]) in
            let raw = try RawConnection(port: port, timeout: .seconds(30))
            try raw.plainHandshake()
            try raw.send(Self.frames(2..<UInt32(2 + requests)) { _ in .getPage(GetPage(list: list, limit: 1000)) })
            let paused = process.waitForStandardError(containing: "level=debug event=read_paused", timeout: .seconds(20))
            let pagesHandled = try rawStats(port: port).requests.first { $0.type == .getPage }?.requests ?? 0
            let wrong = try raw.receivePageHeaders(count: requests, firstID: 2, rows: 1000)
            return (paused, pagesHandled, wrong)
        }
        #expect(seen.paused)
        #expect(seen.pagesHandled < UInt64(requests), "the server held the rest back")
        #expect(seen.wrong.isEmpty, "\(seen.wrong.prefix(3))")
        let after = try await serverStats(server)
        #expect(after.readPauses >= 1)
        #expect(after.connectionsDroppedForOutput == 0)
        #expect(after.requests.first { $0.type == .getPage }?.requests == UInt64(requests))
    }

    /// `--max-in-flight 4`: 2,000 PINGs in one write are all answered, in
    /// order and without an error: the server paces them four at a time.
    @Test func inFlightLimitPacesAPipelineWithoutRefusingIt() async throws {
        let server = try TestServer.start(["--max-in-flight", "4"])
        defer { server.stop() }
        let port = server.port
        let wrong = try await BlockingWork.run { () throws -> [UInt32] in
            let raw = try RawConnection(port: port)
            try raw.handshake()
            try raw.send(Self.frames(2..<UInt32(2002)) { id in .ping(Ping(data: [UInt8(id & 0xFF)])) })
            var wrong: [UInt32] = []
            for id in 2..<UInt32(2002) {
                let (header, message) = try raw.receive()
                if header.requestID != id || message != .pong(Pong(data: [UInt8(id & 0xFF)])) { wrong.append(id) }
            }
            return wrong
        }
        #expect(wrong.isEmpty)
        let stats = try await serverStats(server)
        #expect(stats.inFlightPauses >= 1)
        #expect(stats.errors.isEmpty)
    }

    /// The same with answers held until the log is fsynced (`--fsync
    /// always`): held answers count as in flight, and the requests held back
    /// behind them go on once they are released, without new bytes arriving.
    @Test func inFlightLimitWithAnswersHeldForTheLog() async throws {
        let server = try TestServer.start(["--max-in-flight", "4", "--fsync", "always"])
        defer { server.stop() }
        let list = try #require(try await makeLoadLists(on: server, count: 1, items: 10).first)
        let port = server.port
        let wrong = try await BlockingWork.run { () throws -> [String] in
            let raw = try RawConnection(port: port)
            try raw.handshake()
            try raw.send(Self.frames(2..<UInt32(302)) { id in
                .patch(Patch(list: list, ops: [.toggle(.id(ItemID(UInt64(id % 10 + 1))))]))
            })
            var revision: Revision = 0
            var wrong: [String] = []
            for id in 2..<UInt32(302) {
                let (header, message) = try raw.receive()
                guard header.requestID == id, case .patchOK(let ok) = message, ok.revision > revision else {
                    wrong.append("answer \(header.requestID): \(message)")
                    continue
                }
                revision = ok.revision
            }
            return wrong
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(3))")
        #expect(try await serverStats(server).inFlightPauses >= 1)
    }

    /// `--idle-timeout 1`: a connection that sends nothing more gets ERROR
    /// LIMIT_EXCEEDED `idleTimeout` with request id 0, then the end of the
    /// stream; STATS counts it and the log says so.
    @Test func idleConnectionsAreToldAndClosed() async throws {
        let server = try TestServer.start(["--idle-timeout", "1"])
        defer { server.stop() }
        let port = server.port
        let (id, error, cleanEnd) = try await BlockingWork.run { () throws -> (UInt32, ChecklistError, Bool) in
            let raw = try RawConnection(port: port)
            defer { raw.finish() }
            try raw.handshake()
            let (id, error) = try raw.receiveError()
            return (id, error, try raw.readsCleanEndOfStream())
        }
        #expect(id == 0 && error.code == .limitExceeded && error.field == "idleTimeout")
        #expect(cleanEnd)
        let stats = try await serverStats(server)
        #expect(stats.connectionsIdleClosed >= 1)
        #expect(stats.errors.contains { $0.code == .limitExceeded })
        #expect(try await BlockingWork.run { server.process.waitForStandardError(containing: "level=info event=idle_timeout", timeout: .seconds(20)) })
    }

    /// `--idle-timeout 1` also ends a connection whose client stopped
    /// reading: with answers owed and none taken, back-pressure alone would
    /// hold it (and its buffers) forever. Another client is served meanwhile.
    @Test func aClientThatStopsReadingIsClosedAfterTheIdleTimeout() async throws {
        let server = try TestServer.start(["--idle-timeout", "1"])
        defer { server.stop() }
        let list = try await makeWideList(on: server)
        let port = server.port
        let process = server.process
        let (closedIdle, closed) = try await BlockingWork.run { () throws -> (Bool, Bool) in
            let raw = try RawConnection(port: port, timeout: .seconds(30))
            try raw.plainHandshake()
            try raw.send(Self.frames(2..<UInt32(302)) { _ in .getPage(GetPage(list: list, limit: 1000)) })
            // The server counts the close, then logs it.
            let stalled = process.waitForStandardError(containing: "level=warn event=output_stalled", timeout: .seconds(20))
            let closedIdle = try stalled && rawStats(port: port).connectionsIdleClosed >= 1
            return (closedIdle, try raw.drainsToClose())
        }
        #expect(closedIdle)
        #expect(closed)
        let stats = try await serverStats(server)
        #expect(stats.connectionsOpen == 1)
        #expect(stats.connectionsDroppedForOutput == 0)
    }

    /// `--max-connections 2`: the third connection is refused with ERROR
    /// LIMIT_EXCEEDED `connections`; STATS counts it and the log says so.
    @Test func theConnectionLimitIsCountedAndLogged() async throws {
        let server = try TestServer.start(["--max-connections", "2"])
        defer { server.stop() }
        let port = server.port
        let first = try await server.connect()
        let (id, error, stats) = try await BlockingWork.run { () throws -> (UInt32, ChecklistError, StatsReport) in
            let second = try RawConnection(port: port)
            defer { second.finish() }
            try second.handshake()
            let third = try RawConnection(port: port)
            let (id, error) = try third.receiveError()
            // STATS on the second connection: the only way in while the server is full.
            try second.send(.stats(Stats()), id: 2)
            guard case .statsReport(let stats) = try second.receive().1 else { throw TestFailure("expected STATS_REPORT") }
            return (id, error, stats)
        }
        #expect(id == 0 && error.code == .limitExceeded && error.field == "connections")
        #expect(stats.connectionsRejected >= 1)
        #expect(stats.connectionsOpen == 2)
        #expect(try await BlockingWork.run { server.process.waitForStandardError(containing: "level=warn event=connection_limit", timeout: .seconds(20)) })
        await first.close()
    }

    /// STATS after known traffic, the CLI's `stats --json`, and the same
    /// figures at `--metrics-port` in the Prometheus text format; other
    /// paths and methods get 404 and 405.
    @Test func statsCLIAndPrometheusReportTheSameFigures() async throws {
        let server = try TestServer.start(["--metrics-port", "0", "--seed-demo"])
        defer { server.stop() }
        let client = try await server.connect()
        for _ in 0..<5 { _ = try await client.page(ListID(1), limit: 10) }
        await #expect(throws: ClientError.self) { try await client.page(ListID(99), limit: 10) }
        _ = try await client.subscribe([], allLists: true)
        let stats = try await client.stats()
        #expect(stats.requests.first { $0.type == .getPage } == .init(type: .getPage, requests: 6, errors: 1))
        #expect(stats.errors == [.init(code: .notFound, count: 1)])
        #expect(stats.lists == 4 && stats.items == 10)
        #expect(stats.latency.count >= 7 && stats.latency.p50Micros <= stats.latency.maxMicros)
        // The log and snapshot fields are there when the server keeps them.
        if let log = stats.log { #expect(log.durableLSN <= log.lastLSN && !log.failed) }
        // Live sync: this connection subscribed; the demo lists' commits
        // were published and are retained.
        let sync = try #require(stats.sync)
        #expect(sync.subscribers == 1 && sync.subscribersDropped == 0)
        #expect(sync.changesPublished >= 4 && sync.retainedChanges == sync.changesPublished && sync.retainedBytes > 0)
        await client.close()

        let cli = try CLI(server: "127.0.0.1:\(server.port)").json("stats")
        #expect((cli["connections"] as? [String: Any])?["total"] != nil)
        #expect(cli["items"] as? Int == 10)
        #expect(cli["log"] is NSNull || cli["log"] is [String: Any])
        #expect((cli["sync"] as? [String: Any])?["changesPublished"] as? Int == Int(sync.changesPublished))

        let line = try #require(server.process.standardOutput.split(separator: "\n").first { $0.contains("metrics on http://") })
        let address = try SocketAddress(parsing: String(line.split(separator: "/")[1]))
        let metrics = try httpGet(address, path: "/metrics")
        #expect(metrics.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(metrics.contains("Content-Type: text/plain; version=0.0.4"))
        #expect(metrics.contains("\nchecklistd_requests_total{type=\"GET_PAGE\"} 6\n"))
        #expect(metrics.contains("\nchecklistd_request_errors_total{type=\"GET_PAGE\"} 1\n"))
        #expect(metrics.contains("\nchecklistd_errors_total{code=\"NOT_FOUND\"} 1\n"))
        #expect(metrics.contains("\nchecklistd_items 10\n"))
        #expect(metrics.contains("checklistd_request_duration_seconds{quantile=\"0.99\"} "))
        #expect(metrics.contains("\nchecklistd_log_last_lsn ") == (stats.log != nil))
        #expect(metrics.contains("\nchecklistd_changes_published_total \(sync.changesPublished)\n"))
        #expect(try httpGet(address, path: "/nope").hasPrefix("HTTP/1.1 404"))
        #expect(try httpGet(address, path: "/metrics", method: "POST").hasPrefix("HTTP/1.1 405"))
    }

    /// A server whose descriptor limit cannot hold `--max-connections` says
    /// so at start (and still serves); lost framing is logged as a connection error.
    @Test func descriptorLimitAndConnectionErrorsAreLogged() async throws {
        let directory = try TemporaryDirectory(prefix: "checklistd-fd")
        defer { directory.remove() }
        let daemon = try ProductLocator.path(of: "checklistd")
        let process = try ServerProcess.start(executable: "/bin/sh", arguments: [
            "-c", "ulimit -n 300 && exec \"$0\" --host 127.0.0.1 --port 0 --data-dir \"$1\"", daemon, directory.path,
        ])
        defer { process.stop() }
        #expect(try await BlockingWork.run { process.waitForStandardError(containing: "level=warn event=fd_limit ", timeout: .seconds(20)) })
        let line = try #require(process.standardError.split(separator: "\n").first { $0.contains("event=fd_limit") })
        #expect(line.contains(" soft=300 ") && line.contains(" needed=10256 "))

        let raw = try RawConnection(port: process.port)
        try raw.send([0, 0, 0, 3, 1, 2, 3])
        let (id, error) = try raw.receiveError()
        #expect(id == 0 && error.code == .malformedFrame)
        #expect(try await BlockingWork.run { process.waitForStandardError(containing: "reason=MALFORMED_FRAME", timeout: .seconds(20)) })
        #expect(process.standardError.contains("level=warn event=connection_error"))
    }

    /// The frames of `requests(id)` for every id in `ids`, in one buffer.
    static func frames(_ ids: Range<UInt32>, _ request: (UInt32) -> Request) -> [UInt8] {
        var bytes = WireWriter()
        var encoder = FrameEncoder()
        for id in ids { request(id).encode(requestID: id, into: &bytes, encoder: &encoder) }
        return bytes.bytes
    }
}
