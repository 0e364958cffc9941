import ChecklistRandom
#if canImport(Glibc)
import Glibc
#endif
import CLinux
import ChecklistFrames
import ChecklistIO
import ChecklistModel
import ChecklistSocket
import ChecklistTLS
import ChecklistWire

/// One connection of the load driver: the bench's policy over a
/// `FrameStream` (ChecklistFrames' frame core, shared with the client
/// library and the blocking `FrameSocket`): the requests it has
/// outstanding (answers must come back in order, each with its request's
/// id), and the checks every answer must pass. Owned by one `LoadWorker`
/// and used on its thread only.
///
/// With the plan's TLS context, the stream's TLS handshake (driven by the
/// same readiness events) comes between the TCP connect and HELLO, and the
/// frames travel inside TLS; `bytesIn`/`bytesOut` then count ciphertext.
final class LoadConnection {
    enum State { case idle, connecting, tlsHandshaking, handshaking, ready, closed }

    /// A request waiting for its answer.
    struct Outstanding {
        var id: UInt32
        var kind: LoadRequestKind
        var list: Int
        var offset: Int
        /// When it was sent (closed loop) or due (open loop).
        var startNanos: UInt64
    }

    let slot: Int
    private(set) var state = State.idle
    /// The socket, TLS and frame buffers, once connecting began.
    private var stream: FrameStream?
    private var outstanding: [Outstanding] = []
    private var outstandingHead = 0
    /// Open loop: due times of requests waiting for a free pipeline slot.
    private var backlog: [UInt64] = []
    private var backlogHead = 0
    private var nextRequestID: UInt32 = 2
    private var rng: SplitMix64
    /// The highest revision seen per load list: never goes down, grows with each PATCH.
    private var revisions: [UInt64]
    private var encoder = FrameEncoder(compress: false)
    private var writeInterest = false
    /// The server sent a connection-level ERROR (request id 0): it is closing.
    private var goodbye: String?

    static let helloID: UInt32 = 1

    init(slot: Int, lists: Int, seed: UInt64) {
        self.slot = slot
        rng = SplitMix64(seed: seed &+ UInt64(slot) &* 0x9E37_79B9)
        revisions = [UInt64](repeating: 0, count: lists)
    }

    var outstandingCount: Int { outstanding.count - outstandingHead }
    var backlogCount: Int { backlog.count - backlogHead }

    // MARK: Connecting

    /// Starts a non-blocking connect (and, with `plan.tls`, a TLS session
    /// for it); false if it failed at once.
    func connect(plan: LoadPlan, readiness: any Readiness) -> Bool {
        let address = plan.nodes.isEmpty ? plan.address : plan.nodes[slot % plan.nodes.count]
        var session: TLSSession?
        if let context = plan.tls {
            guard let made = try? TLSSession(client: context, serverName: plan.serverName) else { return false }
            session = made
        }
        let fd = socket(address.addressFamily, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        guard let stream = try? FrameStream(fd: fd, tls: session, sendLimit: .max, receiveCapacity: 32 << 10) else {
            closeSocket(fd)
            return false
        }
        self.stream = stream
        try? setNoDelay(fd)
        let rc = address.withSockAddr { Glibc.connect(fd, $0, $1) }
        guard rc == 0 || errno == EINPROGRESS else { return false }
        state = .connecting
        writeInterest = true
        do {
            try readiness.register(fd, token: UInt64(slot), interest: [.readable, .writable])
            return true
        } catch {
            return false
        }
    }

    // MARK: Events

    func handle(events: ReadinessEvents, worker: LoadWorker) {
        guard let stream else { return }
        if state == .connecting {
            guard !events.isDisjoint(with: [.writable, .error, .hangUp]) else { return }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(stream.fd, SOL_SOCKET, SO_ERROR, &error, &length)
            guard error == 0 else {
                worker.connectFailed(self, "connect: \(String(cString: strerror(error)))")
                close(worker: worker)
                return
            }
            if stream.tls != nil {
                state = .tlsHandshaking
                advanceTLSHandshake(worker: worker)
            } else {
                sendHello(worker: worker)
            }
            return
        }
        if state == .tlsHandshaking { return advanceTLSHandshake(worker: worker) }
        if events.contains(.writable) && writeInterest { flush(worker: worker) }
        if !events.isDisjoint(with: [.readable, .hangUp, .error]) { read(stream, worker: worker) }
    }

    private func sendHello(worker: LoadWorker) {
        state = .handshaking
        let hello = Hello(features: worker.plan.compression ? [.compression] : [], clientName: "checklist-bench-load")
        enqueue { $0.append(hello, requestID: Self.helloID, to: &$1) }
        flush(worker: worker)
    }

    /// Drives the TLS handshake as far as the bytes received allow; HELLO
    /// follows once it is complete.
    private func advanceTLSHandshake(worker: LoadWorker) {
        guard let stream else { return }
        do throws(FrameStreamError) {
            let complete = try stream.advanceHandshake()
            if complete {
                sendHello(worker: worker)
            } else {
                updateWriteInterest(stream.hasPendingOutput, worker: worker)
            }
        } catch {
            lost(worker: worker, "tls: \(error.message)")
        }
    }

    /// One read step (level-triggered: one read per wake-up keeps
    /// connections fair), then every whole frame it completed.
    private func read(_ stream: FrameStream, worker: LoadWorker) {
        let step: FrameStream.ReadStep
        do throws(FrameStreamError) {
            step = try stream.readAvailable()
        } catch {
            lost(worker: worker, error.code == .tls ? "tls: \(error.message)" : "read: \(error)")
            return
        }
        if case .bytes(let n) = step { worker.result.bytesIn += UInt64(n) }
        do throws(FrameStreamError) {
            while state != .closed,
                  try stream.nextFrame(maxFrameBytes: worker.plan.maxFrameBytes, { answer($0, $1, worker: worker) }) != nil {}
        } catch {
            worker.result.fail("decode", "frame: \(error.framing.map { "\($0)" } ?? error.message)")
            lost(worker: worker, "lost framing")
            return
        }
        if step == .endOfFile && state != .closed { lost(worker: worker, goodbye ?? "the server closed the connection") }
        if state != .closed && stream.tls?.hasPendingOutput == true { flush(worker: worker) }
    }

    // MARK: Answers

    private func answer(_ header: FrameHeader, _ body: UnsafeRawBufferPointer, worker: LoadWorker) {
        if header.requestID == FrameHeader.pushRequestID {
            // SHUTTING_DOWN, an idle timeout or the connection limit: the
            // server closes after the answers it owes.
            if header.type == .error, let message = try? WireReader.decode(Array(body), { (r) throws(ChecklistError) in
                try ErrorMessage.decode(from: &r)
            }) {
                goodbye = "\(message.error.code.name): \(message.error.message)"
                // Before the handshake it is the refusal, counted as a failed connect.
                if state == .ready {
                    worker.result.fail(message.error.code.name, "request id 0: \(message.error.message)")
                }
            } else {
                worker.result.fail("check:type", "unexpected frame \(header.type.name) with request id 0")
            }
            return
        }
        if state == .handshaking {
            guard header.requestID == Self.helloID, header.type == .helloOK else {
                let reason = header.type == .error ? errorName(body) : "answered HELLO with \(header.type.name)"
                worker.connectFailed(self, "handshake: \(reason)")
                close(worker: worker)
                return
            }
            state = .ready
            worker.connectionReady(self)
            return
        }
        guard outstandingCount > 0 else {
            worker.result.fail("check:request_id", "answer \(header.requestID) to no outstanding request")
            return
        }
        let request = outstanding[outstandingHead]
        outstandingHead += 1
        if outstandingHead == outstanding.count {
            outstanding.removeAll(keepingCapacity: true)
            outstandingHead = 0
        }
        worker.recordAnswer(kind: request.kind, startNanos: request.startNanos)
        guard header.requestID == request.id else {
            worker.result.fail("check:request_id", "expected the answer to \(request.id), got \(header.requestID)")
            lost(worker: worker, "answers out of order")
            return
        }
        if header.type == .error {
            let name = errorName(body)
            worker.result.fail(name, "\(request.kind.name) request \(request.id)")
        } else if header.flags.rawValue != 0 && !(worker.plan.compression && header.flags == .compressed) {
            worker.result.fail("check:flags", "flags \(header.flags.rawValue) on an uncompressed connection")
        } else {
            let problem: String?
            do throws(ChecklistError) {
                let inflated = header.flags == .compressed
                    ? try Zlib.decompress(body, limit: Int(worker.plan.maxFrameBytes)) : nil
                var r = inflated.map { $0.withUnsafeBytes { WireReader($0) } } ?? WireReader(body)
                switch request.kind {
                case .page: problem = header.type == .page ? try checkPage(&r, request, worker.plan) : "got \(header.type.name)"
                case .patch: problem = header.type == .patchOK ? try checkPatch(&r, request, worker.plan) : "got \(header.type.name)"
                case .insert: problem = header.type == .patchOK ? try checkPatch(&r, request, worker.plan) : "got \(header.type.name)"
                case .lists: problem = header.type == .lists ? try checkLists(&r, worker.plan) : "got \(header.type.name)"
                }
            } catch {
                problem = "undecodable: \(error)"
            }
            if let problem { worker.result.fail("check:\(request.kind.name)", problem) }
        }
        worker.answered(self)
    }

    private func errorName(_ body: UnsafeRawBufferPointer) -> String {
        var r = WireReader(body)
        guard let code = try? r.readVarint("code") else { return "decode" }
        return ChecklistError.Code(rawValue: UInt16(truncatingIfNeeded: code)).name
    }

    /// A page of the load list as it must be: `total` rows "item 0"... with
    /// ids 1... in order, `min(limit, total - offset)` of them from `offset`.
    /// The rows are checked by `LoadRowCheck` in one pass; only when it
    /// finds something off are they decoded again here to say what.
    private func checkPage(_ r: inout WireReader, _ request: Outstanding, _ plan: LoadPlan) throws(ChecklistError) -> String? {
        let h = try PageHeader.decode(from: &r)
        let expected = request.offset < plan.items ? min(plan.pageSize, plan.items - request.offset) : 0
        guard h.list == plan.lists[request.list], h.total == UInt64(plan.items), h.offset == UInt64(request.offset),
              h.count == expected else {
            return "list \(h.list) total \(h.total) offset \(h.offset) count \(h.count) for offset \(request.offset)"
        }
        guard h.revision >= revisions[request.list] else {
            return "revision \(h.revision) after \(revisions[request.list])"
        }
        revisions[request.list] = h.revision
        let rows = try r.readSlice("rows", count: r.remaining)
        if LoadRowCheck.rowsAreRight(rows, first: request.offset, count: h.count, textBytes: plan.textBytes) { return nil }
        // Something is off: decode field by field to say what (or throw).
        r = WireReader(rows)
        for j in 0..<h.count {
            let index = request.offset + j
            let id = try r.readVarint("id")
            let flags = try r.readU8("flags")
            let text = try r.readByteSlice("text")
            if flags & 4 != 0 { _ = try r.readZigZag("due") }
            if flags & 8 != 0 { _ = try r.readZigZag("price") }
            guard id == UInt64(index + 1), flags & 0xF0 == 0, Self.isItemText(text, index: index, textBytes: plan.textBytes) else {
                return "row \(index): id \(id), flags \(flags), \(text.count)-byte text"
            }
        }
        return nil
    }

    private func checkPatch(_ r: inout WireReader, _ request: Outstanding, _ plan: LoadPlan) throws(ChecklistError) -> String? {
        let list = try r.readVarint("list")
        let revision = try r.readVarint("revision")
        let pairs = try r.readVarint("count")
        guard list == plan.lists[request.list].rawValue, pairs == 0 else { return "list \(list), \(pairs) pairs" }
        guard revision > revisions[request.list] else { return "revision \(revision) after \(revisions[request.list])" }
        revisions[request.list] = revision
        return nil
    }

    private func checkLists(_ r: inout WireReader, _ plan: LoadPlan) throws(ChecklistError) -> String? {
        let count = try r.readCount("count", max: r.remaining / 6)
        var found = 0
        for _ in 0..<count {
            let id = try r.readVarint("id")
            _ = try r.readByteSlice("name")
            _ = try r.readByteSlice("icon")
            let itemCount = try r.readVarint("itemCount")
            _ = try r.readVarint("uncheckedCount")
            let revision = try r.readVarint("revision")
            guard let index = plan.listIndex[id] else { continue }
            found += 1
            guard itemCount == UInt64(plan.items), revision >= revisions[index] else {
                return "list \(id): \(itemCount) items, revision \(revision) after \(revisions[index])"
            }
            revisions[index] = revision
        }
        return found == plan.lists.count ? nil : "\(found) of the \(plan.lists.count) load lists listed"
    }

    /// Whether `text` is exactly `item <index>`, padded with dots to
    /// `textBytes` bytes when it is shorter (`LoadPlan.itemText`).
    static func isItemText(_ text: UnsafeRawBufferPointer, index: Int, textBytes: Int = 0) -> Bool {
        // "item " is 105 116 101 109 32.
        guard text.count > 5, text[0] == 105, text[1] == 116, text[2] == 101, text[3] == 109,
              text[4] == 32 else { return false }
        var value = 0
        var end = 5
        while end < text.count && end < 25, case let digit = Int(text[end]) - 48, digit >= 0 && digit <= 9 {
            value = value &* 10 &+ digit
            end += 1
        }
        guard end > 5, value == index, end == 6 || text[5] != 48 else { return false }
        // Padding: none when `item <index>` is already long enough, else dots up to `textBytes`.
        guard text.count == max(end, textBytes) else { return false }
        for i in end..<text.count where text[i] != 46 { return false }
        return true
    }

    // MARK: Requests

    /// Queues one request of the mix (sent at the next `flush`).
    func issue(startNanos: UInt64, plan: LoadPlan) {
        let kind = plan.mix.pick(rng.next())
        let draw = rng.next()
        let list = kind.writes ? plan.writeList(slot: slot, draw: draw) : Int(draw % UInt64(plan.lists.count))
        let id = nextRequestID
        nextRequestID = nextRequestID == .max ? 2 : nextRequestID + 1
        var offset = 0
        switch kind {
        case .page:
            offset = plan.pageOffset ?? Int(rng.next() % UInt64(plan.items))
            let request = GetPage(list: plan.lists[list], start: .offset(UInt64(offset)), limit: UInt64(plan.pageSize))
            enqueue { $0.append(request, requestID: id, to: &$1) }
        case .patch:
            // One TOGGLE of item `n`: list, presence 0, count 1, opcode 0x04, ItemRef n << 1.
            let item = rng.next() % UInt64(plan.items) + 1
            let listID = plan.lists[list].rawValue
            enqueue { encoder, output in
                encoder.append(type: .patch, requestID: id, to: &output) { w in
                    w.writeVarint(listID)
                    w.writeU8(0)
                    w.writeVarint(1)
                    w.writeU8(0x04)
                    w.writeVarint(item << 1)
                }
            }
        case .lists:
            enqueue { $0.append(ListLists(), requestID: id, to: &$1) }
        case .insert:
            // One INSERT at the end, no temporary reference: list, presence
            // 0, count 1, then the operation (`insertOperation`, encoded once).
            let listID = plan.lists[list].rawValue
            let operation = plan.insertOperation
            enqueue { encoder, output in
                encoder.append(type: .patch, requestID: id, to: &output) { w in
                    w.writeVarint(listID)
                    w.writeU8(0)
                    w.writeVarint(1)
                    w.bytes.append(contentsOf: operation)  // already encoded: no length prefix
                }
            }
        }
        outstanding.append(Outstanding(id: id, kind: kind, list: list, offset: offset, startNanos: startNanos))
    }

    /// Open loop: a request came due; it waits if the pipeline is full.
    func due(at nanos: UInt64, plan: LoadPlan) {
        if outstandingCount < plan.pipeline && backlogCount == 0 {
            issue(startNanos: nanos, plan: plan)
        } else if backlogCount < 100_000 {
            backlog.append(nanos)
        }
    }

    /// Open loop: after an answer, sends the oldest waiting request.
    func issueFromBacklog(plan: LoadPlan) {
        guard backlogCount > 0, outstandingCount < plan.pipeline else { return }
        let nanos = backlog[backlogHead]
        backlogHead += 1
        if backlogHead == backlog.count {
            backlog.removeAll(keepingCapacity: true)
            backlogHead = 0
        }
        issue(startNanos: nanos, plan: plan)
    }

    /// Encodes frames straight into the stream's queue (whose own bound is
    /// off: the pipeline bounds what a connection has queued).
    private func enqueue(_ encode: (inout FrameEncoder, inout WireWriter) -> Void) {
        try? stream?.enqueueFrames { encode(&encoder, &$0) }
    }

    /// Writes what is queued; waits for writability if the socket is full.
    func flush(worker: LoadWorker) {
        guard state != .closed, let stream else { return }
        do throws(FrameStreamError) {
            let step = try stream.flush()
            worker.result.bytesOut += UInt64(step.written)
            updateWriteInterest(!step.isDone, worker: worker)
        } catch {
            lost(worker: worker, "send: \(error)")
        }
    }

    private func updateWriteInterest(_ wantWrite: Bool, worker: LoadWorker) {
        guard let stream, wantWrite != writeInterest else { return }
        writeInterest = wantWrite
        try? worker.readiness.update(stream.fd, token: UInt64(slot), interest: wantWrite ? [.readable, .writable] : .readable)
    }

    // MARK: Closing

    /// The connection ended under us: what it still owed counts as lost.
    private func lost(worker: LoadWorker, _ reason: String) {
        let owed = outstandingCount
        if state == .connecting || state == .tlsHandshaking || state == .handshaking {
            worker.connectFailed(self, reason)
        } else if owed > 0 {
            for _ in 0..<owed { worker.result.fail("closed", reason) }
        } else if worker.phase == .running && goodbye == nil {
            worker.result.fail("closed", reason)
        }
        close(worker: worker)
    }

    /// Requests still unanswered when the drain time ran out.
    func abandon(worker: LoadWorker) {
        for _ in 0..<outstandingCount { worker.result.fail("timeout", "no answer before the drain deadline") }
        close(worker: worker)
    }

    func close(worker: LoadWorker) {
        guard state != .closed else { return }
        let wasOpen = state == .ready
        state = .closed
        if let stream {
            worker.readiness.deregister(stream.fd)
            stream.close(notify: false)
        }
        outstanding.removeAll()
        outstandingHead = 0
        backlog.removeAll()
        backlogHead = 0
        worker.connectionClosed(self, wasOpen: wasOpen)
    }
}
