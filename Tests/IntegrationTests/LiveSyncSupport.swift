import ChecklistClient
import ChecklistSocket
import ChecklistTesting
import ChecklistWire
import Foundation
import Synchronization
import Testing

/// Every live-sync integration suite, one test at a time: each starts its
/// own `checklistd` and moves megabytes, and the whole test plan already
/// runs dozens of servers at once on few cores.
@Suite(.serialized, .timeLimit(.minutes(10))) struct LiveSyncIntegration {}

/// A client's copy of one list, kept only from live-sync changes: applying
/// every change in order must give exactly the server's list.
struct ListReplica: Equatable {
    var revision: Revision
    var items: [Item] = []

    init(revision: Revision, items: [Item] = []) {
        self.revision = revision
        self.items = items
    }

    /// Applies `change`, which must be the next revision.
    mutating func apply(_ change: ListChange) throws {
        guard change.revision == revision + 1 else {
            throw TestFailure("change \(change.revision) does not follow revision \(revision)")
        }
        revision = change.revision
        guard case .patched(let ops) = change.kind else { return }
        for op in ops {
            switch op {
            case let .insert(id, index, fields): items.insert(Item(id: id, fields: fields), at: Int(index))
            case let .setText(id, text): try update(id) { $0.text = text }
            case let .setChecked(id, checked): try update(id) { $0.checked = checked }
            case let .setDue(id, due): try update(id) { $0.due = due }
            case let .setRemind(id, remind): try update(id) { $0.remind = remind }
            case let .setPrice(id, price): try update(id) { $0.price = price }
            case let .setKey(id, key): try update(id) { $0.clientKey = key }
            case let .delete(id): items.remove(at: try index(of: id))
            case let .move(id, toIndex):
                let item = items.remove(at: try index(of: id))
                items.insert(item, at: Int(toIndex))
            }
        }
    }

    private func index(of id: ItemID) throws -> Int {
        guard let index = items.firstIndex(where: { $0.id == id }) else { throw TestFailure("no item \(id)") }
        return index
    }

    private mutating func update(_ id: ItemID, _ body: (inout ItemFields) -> Void) throws {
        body(&items[try index(of: id)].fields)
    }

    /// The server's list, read page by page.
    static func read(_ list: ListID, on connection: ChecklistConnection) async throws -> ListReplica {
        var page = try await connection.page(list, limit: 1000)
        var items = page.items
        while page.hasMore {
            page = try await connection.page(list, start: .offset(page.endOffset), limit: 1000)
            items += page.items
        }
        return ListReplica(revision: page.revision, items: items)
    }
}

/// A random valid batch for a list whose current items are `ids` (the
/// caller keeps `ids` up to date from the answer).
func randomOps(_ ids: inout [ItemID], _ rng: inout some RandomNumberGenerator, tag: String) -> [PatchOperation] {
    var ops: [PatchOperation] = []
    for _ in 0..<Int.random(in: 1...3, using: &rng) {
        let choice = ids.isEmpty ? 0 : Int.random(in: 0..<6, using: &rng)
        switch choice {
        case 0:
            ops.append(.insert(tempRef: nil, position: .index(UInt64.random(in: 0...UInt64(ids.count), using: &rng)),
                               fields: ItemFields(text: "\(tag) \(ops.count)")))
            return ops  // ids change: stop the batch here
        case 1: ops.append(.setText(.id(ids.randomElement(using: &rng)!), "\(tag) text"))
        case 2: ops.append(.toggle(.id(ids.randomElement(using: &rng)!)))
        case 3: ops.append(.setPrice(.id(ids.randomElement(using: &rng)!), Bool.random(using: &rng) ? nil : 250))
        case 4:
            ops.append(.move(.id(ids.randomElement(using: &rng)!), toIndex: UInt64.random(in: 0..<UInt64(ids.count), using: &rng)))
        default:
            let victim = ids.randomElement(using: &rng)!
            ids.removeAll { $0 == victim }
            ops.append(.delete(.id(victim)))
            return ops
        }
    }
    return ops
}


/// A TCP proxy in front of a server that, once armed, cuts the connection
/// instead of forwarding the first PATCH_OK: the client's patch is applied,
/// but its answer is lost. Later connections pass through untouched. With
/// `holdAnswer`, the connection stays open instead, forwarding nothing more
/// to the client until the server goes away (a patch in flight when its
/// server dies).
final class AnswerCuttingProxy: Sendable {
    let port: UInt16
    private let listenFD: Int32
    private let upstreamPort: UInt16
    private let holdAnswer: Bool
    private let state = AwaitedState(State())

    private struct State {
        var armed = true
        var cuts = 0
        var sockets: [Int32] = []
        var stopped = false
    }

    /// - Parameter cutFirstAnswer: cut at the first PATCH_OK (else only `cutAll()` cuts).
    init(upstreamPort: UInt16, cutFirstAnswer: Bool = true, holdAnswer: Bool = false) throws {
        self.upstreamPort = upstreamPort
        self.holdAnswer = holdAnswer
        state.withLock { $0.armed = cutFirstAnswer }
        (listenFD, port) = try makeListeningSocket(host: "127.0.0.1", port: 0)
        try setNonBlocking(listenFD, false)
        let fd = listenFD
        Thread.detachNewThread { [self] in
            while true {
                guard let accepted = try? acceptConnection(fd) else { return }
                self.serve(accepted.fd)
            }
        }
    }

    /// Connections cut so far.
    var cuts: Int { state.withLock { $0.cuts } }

    /// Waits until a connection was cut (or its answer held); false after `timeout`.
    func waitForCut(timeout: Duration = .seconds(20)) async -> Bool {
        await state.wait(timeout: timeout) { $0.cuts > 0 }
    }

    /// Cuts every connection open now (both directions), like a network failure.
    func cutAll() {
        let sockets = state.withLock { s -> [Int32] in
            s.cuts += s.sockets.count / 2
            return s.sockets
        }
        for fd in sockets { try? shutdownSocket(fd, .both) }
    }

    func stop() {
        let sockets = state.withLock { s -> [Int32] in
            s.stopped = true
            return s.sockets
        }
        try? shutdownSocket(listenFD, .both)
        closeSocket(listenFD)
        for fd in sockets { try? shutdownSocket(fd, .both) }
    }

    private func serve(_ client: Int32) {
        guard (try? setNonBlocking(client, false)) != nil, let upstream = try? connectSocket(host: "127.0.0.1", port: upstreamPort) else {
            closeSocket(client)
            return
        }
        state.withLock { $0.sockets += [client, upstream] }
        // The second pump to finish closes both sockets.
        let finished = PumpCounter()
        let close: @Sendable () -> Void = { [self] in
            guard finished.count.add(1, ordering: .acquiringAndReleasing).newValue == 2 else { return }
            state.withLock { $0.sockets.removeAll { $0 == client || $0 == upstream } }
            closeSocket(client)
            closeSocket(upstream)
        }
        Thread.detachNewThread { Self.pump(from: client, to: upstream); close() }
        Thread.detachNewThread { [self] in self.pumpAnswers(from: upstream, to: client); close() }
    }

    /// Client to server, bytes as they come.
    private static func pump(from source: Int32, to sink: Int32) {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let result = try? chunk.withUnsafeMutableBytes { try readSocket(source, into: $0) }
            guard case .bytes(let n)? = result, (try? writeAll(sink, Array(chunk[0..<n]))) != nil else { break }
        }
        try? shutdownSocket(sink, .write)
    }

    /// Server to client, frame by frame, cutting at the first PATCH_OK while armed.
    private func pumpAnswers(from source: Int32, to sink: Int32) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let result = try? chunk.withUnsafeMutableBytes { try readSocket(source, into: $0) }
            guard case .bytes(let n)? = result else { break }
            buffer += chunk[0..<n]
            while buffer.count >= 10 {
                let length = Int(buffer.withUnsafeBytes { $0.u32BE(at: 0) })
                guard buffer.count >= 4 + length else { break }
                let cut = buffer[4] == MessageType.patchOK.rawValue && state.withLock { s in
                    defer { if s.armed { s.armed = false; s.cuts += 1 } }
                    return s.armed
                }
                if cut && holdAnswer {
                    // Forward nothing more; the client learns only when the server goes away.
                    while case .bytes? = try? chunk.withUnsafeMutableBytes({ try readSocket(source, into: $0) }) {}
                    try? shutdownSocket(sink, .both)
                    return
                }
                if cut {
                    try? shutdownSocket(sink, .both)
                    try? shutdownSocket(source, .both)
                    return
                }
                guard (try? writeAll(sink, Array(buffer[0..<4 + length]))) != nil else { return }
                buffer.removeFirst(4 + length)
            }
        }
        try? shutdownSocket(sink, .write)
    }
}

private final class PumpCounter: Sendable {
    let count = Atomic<Int>(0)
}

extension TestServer {
    /// `start` on a thread of its own: starting waits for the server's
    /// readiness line, which must not hold one of the few threads that every
    /// async test shares (their handshakes would wait behind it).
    static func launch(_ arguments: [String] = [], directory: TemporaryDirectory? = nil) async throws -> TestServer {
        try await BlockingWork.run { try TestServer.start(arguments, directory: directory) }
    }

    /// `stop` (which waits for the process to exit) on a thread of its own.
    func stopInBackground() {
        Thread.detachNewThread { self.stop() }
    }
}

