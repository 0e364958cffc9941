@testable import ChecklistEventLoop
import ChecklistIO
import ChecklistSocket
import ChecklistThreads
import Glibc
import Testing

/// ChecklistIO's readiness layer, both implementations, on pipes: what the
/// server's loops, the client's I/O thread and the benchmark's workers all
/// wait on.
@Suite("Readiness", .timeLimit(.minutes(1)))
struct ReadinessTests {
    /// A pipe whose ends are closed when the test ends.
    struct Pipe: ~Copyable {
        let read: Int32
        let write: Int32
        init() {
            var ends: [Int32] = [-1, -1]
            precondition(pipe(&ends) == 0)
            read = ends[0]
            write = ends[1]
        }
        deinit {
            closeSocket(read)
            closeSocket(write)
        }
    }

    private func events(_ readiness: any Readiness, timeout: Duration?) throws -> [ReadinessEvent] {
        var found: [ReadinessEvent] = []
        try readiness.wait(timeout: timeout) { found.append($0) }
        return found
    }

    /// A readable socket is reported with its token, and again while it
    /// stays readable (level-triggered); after `update` and `deregister`
    /// it is reported for what it is watched for, then not at all.
    @Test(arguments: ReadinessKind.allCases)
    func reportsReadySocketsByToken(kind: ReadinessKind) throws {
        let readiness = try kind.make(capacity: 8)
        defer { readiness.close() }
        let a = Pipe()
        let b = Pipe()
        try readiness.register(a.read, token: 11, interest: .readable)
        try readiness.register(b.write, token: 22, interest: .readable)
        #expect(try events(readiness, timeout: .zero).isEmpty)

        var byte: UInt8 = 1
        #expect(write(a.write, &byte, 1) == 1)
        for _ in 0..<2 {
            let found = try events(readiness, timeout: .seconds(5))
            #expect(found.map(\.token) == [11])
            #expect(found.first?.isReadable == true)
        }
        try readiness.update(b.write, token: 23, interest: [.readable, .writable])
        let both = try events(readiness, timeout: .seconds(5))
        #expect(Set(both.map(\.token)) == [11, 23])
        #expect(both.first { $0.token == 23 }?.isWritable == true)

        readiness.deregister(a.read)
        readiness.deregister(b.write)
        #expect(try events(readiness, timeout: .zero).isEmpty)
    }

    /// The waker ends a wait with no limit, from another thread, and the
    /// wake-up is reported to no one.
    @Test(arguments: ReadinessKind.allCases)
    func theWakerEndsAWaitWithoutLimit(kind: ReadinessKind) throws {
        let readiness = try kind.make()
        defer { readiness.close() }
        let waker = readiness.waker
        let thread = NativeThread.spawn(name: "test-waker") { waker.wake() }
        #expect(try events(readiness, timeout: nil).isEmpty)
        thread.join()
        // Consumed: a look afterwards finds nothing.
        #expect(try events(readiness, timeout: .zero).isEmpty)
    }

    /// The loops run on the implementation `CHECKLIST_READINESS` names, so
    /// running this suite with `CHECKLIST_READINESS=poll` covers poll.
    @Test func loopsRunOnTheConfiguredReadiness() throws {
        let loop = try EventLoop()
        #expect(loop.readinessKind == ReadinessKind.configured)
        let named = getenv(ReadinessKind.environmentVariable).map { String(cString: $0) }
        #expect(loop.readinessKind == (named.flatMap(ReadinessKind.init(rawValue:)) ?? .epoll))
    }
}
