import ChecklistModel
import ChecklistWire
import Synchronization

/// Serves "row i" of a list to a scrolling UI from a fixed pool of reused
/// row buffers, the way a table view dequeues and reuses its cells.
///
/// Row `i` lives in buffer `i % poolSize`. The pool holds one viewport, the
/// rows prefetched ahead of the scroll direction and one page of slack, so
/// the rows wanted at any moment never compete for a buffer. `scroll(toTop:)`
/// asks for the pages that the window needs and that are neither held nor in
/// flight, pipelined on the connection; answers are decoded on the
/// connection's reader thread straight into the buffers (no per-row
/// allocation once warm). Rows of a page that left the window by the time it
/// arrives are dropped, never written over newer rows.
public final class PagingCursor: Sendable {
    /// Row buffers in the pool.
    public let poolSize: Int
    public let viewport: Int
    public let pageSize: Int
    /// Rows fetched ahead of the viewport in the scroll direction.
    public let prefetchRows: Int
    public let list: ListID
    public let filter: RowFilter

    private struct State {
        var slots: [RowSlot] = []
        var buffersAllocated = 0
        var total: Int
        var revision: Revision = 0
        /// Page numbers requested and not answered yet.
        var inFlight: Set<Int> = []
        /// The rows the UI may want now: writes outside it are dropped.
        var window: Range<Int> = 0..<0
        var lastTop = 0
        var failure: ClientError?
    }

    /// Called on the I/O thread after each page arrived: how long the
    /// fetch took (nanoseconds), the frame's size on the wire, rows in it.
    public typealias FetchObserver = @Sendable (_ nanos: UInt64, _ frameBytes: Int, _ rows: Int) -> Void

    private let connection: ChecklistConnection
    private let state: Mutex<State>
    private let observer: FetchObserver?

    /// Opens a cursor; reads the list's row count (for `filter`) first.
    ///
    /// - Parameters:
    ///   - viewport: Rows visible at once.
    ///   - pageSize: Rows per GET_PAGE (at most the server's `maxPageRows`).
    ///   - prefetchPages: Pages fetched ahead of the viewport.
    public init(connection: ChecklistConnection, list: ListID, filter: RowFilter = .all,
                viewport: Int, pageSize: Int = 100, prefetchPages: Int = 4,
                observer: FetchObserver? = nil) async throws {
        precondition(viewport > 0 && pageSize > 0 && prefetchPages >= 0)
        self.connection = connection
        self.observer = observer
        self.list = list
        self.filter = filter
        self.viewport = viewport
        self.pageSize = min(pageSize, Int(connection.serverLimits.maxPageRows))
        self.prefetchRows = self.pageSize * prefetchPages
        self.poolSize = viewport + prefetchRows + 2 * self.pageSize
        let first = try await connection.page(list, start: .offset(0), limit: 1, filter: filter)
        state = Mutex(State(total: Int(first.total), revision: first.revision))
    }

    /// Rows that match the filter, as of the latest page received.
    public var total: Int { state.withLock { $0.total } }

    /// Row buffers ever created; never more than `poolSize`.
    public var buffersAllocated: Int { state.withLock { $0.buffersAllocated } }

    /// The first error a fetch met, if any (the connection dropped, say).
    public var failure: ClientError? { state.withLock { $0.failure } }

    /// Tells the cursor that row `top` is the first visible one: fetches the
    /// pages the viewport and the prefetch area in the scroll direction need.
    public func scroll(toTop top: Int) {
        let pages: [Int] = state.withLock { s in
            let direction = top >= s.lastTop ? 1 : -1
            s.lastTop = top
            let low = direction > 0 ? top : top - prefetchRows
            let high = direction > 0 ? top + viewport + prefetchRows : top + viewport
            let window = max(0, low)..<min(s.total, max(max(0, low), high))
            s.window = window
            guard !window.isEmpty else { return [] }
            var wanted: [Int] = []
            // Nearest pages first, in the scroll direction.
            let ordered = Array(window.lowerBound / pageSize...(window.upperBound - 1) / pageSize)
            for page in direction > 0 ? ordered : ordered.reversed() where !s.inFlight.contains(page) {
                let rows = page * pageSize..<min(s.total, (page + 1) * pageSize)
                if rows.contains(where: { s.slots.count <= $0 % poolSize || s.slots[$0 % poolSize].index != $0 }) {
                    s.inFlight.insert(page)
                    wanted.append(page)
                }
            }
            return wanted
        }
        for page in pages { request(page: page) }
    }

    /// Calls `body` with row `index` if its buffer holds it; nil when the
    /// row is not there yet (a UI would show a placeholder: a hitch).
    public func withRow<R>(_ index: Int, _ body: (RowSlot) throws -> R) rethrows -> R? {
        try state.withLock { s in
            let slot = index % poolSize
            guard index >= 0, slot < s.slots.count, s.slots[slot].index == index else { return nil }
            return try body(s.slots[slot])
        }
    }

    private func request(page: Int) {
        let get = GetPage(list: list, filter: filter, start: .offset(UInt64(page * pageSize)), limit: UInt64(pageSize))
        let sent = ContinuousClock.now
        do {
            try connection.core.send(.getPage(get)) { [self] answer in
                let rows = receive(page: page, answer)
                if let observer, case .success(let (_, body)) = answer {
                    let elapsed = sent.duration(to: .now).components
                    let nanos = UInt64(elapsed.seconds) * 1_000_000_000 + UInt64(elapsed.attoseconds / 1_000_000_000)
                    observer(nanos, FrameHeader.size + body.count, rows)
                }
            }
        } catch let error {
            state.withLock { s in
                s.inFlight.remove(page)
                s.failure = s.failure ?? error
            }
        }
    }

    /// On the I/O thread: decode the PAGE into the buffers.
    /// Returns the number of rows the page held.
    private func receive(page: Int, _ answer: Result<(FrameHeader, UnsafeRawBufferPointer), ClientError>) -> Int {
        state.withLock { s in
            s.inFlight.remove(page)
            do {
                let (header, body) = try answer.get()
                guard header.type == .page else {
                    let message = try? ServerMessage.decode(header: header, body: body, maxFrameBytes: .max)
                    throw ClientError(.protocolViolation, "GET_PAGE answered with \(message.map { "\($0)" } ?? "\(header.type)")")
                }
                return try FrameBody.withMessageBytes(header: header, body: body, maxFrameBytes: .max) { (r) throws(ChecklistError) in
                    try decodeRows(from: &r, into: &s)
                }
            } catch let error as ClientError {
                s.failure = s.failure ?? error
            } catch {
                s.failure = s.failure ?? ClientError(.protocolViolation, "cannot decode a PAGE: \(error)")
            }
            return 0
        }
    }

    private func decodeRows(from r: inout WireReader, into s: inout State) throws(ChecklistError) -> Int {
        let header = try PageHeader.decode(from: &r)
        s.total = Int(header.total)
        s.revision = header.revision
        let first = Int(header.offset)
        for row in first..<first + header.count {
            // The cursor shows rows; it does not keep their client keys.
            let decoded = try PageRow.read(from: &r)
            guard s.window.contains(row) else { continue }
            let index = row % poolSize
            while s.slots.count <= index {
                s.slots.append(RowSlot(reserving: 64))
                s.buffersAllocated += 1
            }
            s.slots.withUnsafeMutableBufferPointer { slots in
                slots[index].index = row
                slots[index].id = decoded.id
                slots[index].checked = decoded.checked
                slots[index].remind = decoded.fields.remind
                slots[index].due = decoded.due
                slots[index].price = decoded.price
                slots[index].textBytes.removeAll(keepingCapacity: true)
                slots[index].textBytes.append(contentsOf: decoded.textBytes)
            }
        }
        return header.count
    }
}
