import ChecklistModel
import ChecklistWire

/// One PAGE as the server sent it, kept as its body bytes: for callers that
/// do not need `Item` values (counting, checking, drawing UTF-8 straight
/// from the bytes). Fetching one costs one buffer, not a String and an
/// `Item` per row; `forEachRow` decodes the rows in place.
///
/// The rows were checked to decode when the page arrived, so `forEachRow`
/// does not throw.
public struct PageBytes: Sendable {
    /// The page's list, revision, counts and number of rows.
    public let header: PageHeader
    /// The filter the rows were counted with.
    public let filter: RowFilter
    /// The PAGE body (inflated if it came compressed).
    private let body: [UInt8]
    /// Where the first row starts in `body`.
    private let rowsStart: Int

    /// One row, lent to `forEachRow`'s visitor: its text and key bytes
    /// point into the page's buffer and are valid only during the call.
    /// (`PageRow.read`, the one reading of the row layout, reads it.)
    public typealias Row = PageRow

    /// Decodes the header of `body` (a PAGE body, inflated if it came
    /// compressed) and checks that its rows decode. Texts and keys are not
    /// checked to be UTF-8 (`Row.text` repairs what is not): the cost of a
    /// page stays one pass over its bytes.
    ///
    /// - Throws: `BAD_FIELD` naming the field that does not decode.
    public init(body: [UInt8], filter: RowFilter) throws(ChecklistError) {
        let decoded = body.withUnsafeBytes { raw in
            Result { () throws(ChecklistError) -> (PageHeader, Int) in
                var r = WireReader(raw)
                let header = try PageHeader.decode(from: &r)
                let rowsStart = r.index
                for _ in 0..<header.count { _ = try PageRow.read(from: &r) }
                return (header, rowsStart)
            }
        }
        let (header, rowsStart) = try decoded.get()
        self.header = header
        self.filter = filter
        self.body = body
        self.rowsStart = rowsStart
    }

    /// The filtered index of the first row; row `i` is at `offset + i`.
    public var offset: UInt64 { header.offset }
    /// The number of rows matching the filter.
    public var total: UInt64 { header.total }
    /// The number of rows in this page.
    public var count: Int { header.count }

    /// Visits the page's rows in order, with no allocation per row.
    public func forEachRow(_ visit: (Row) -> Void) {
        body.withUnsafeBytes { raw in
            var r = WireReader(raw, from: rowsStart)
            for _ in 0..<header.count {
                do throws(ChecklistError) {
                    visit(try PageRow.read(from: &r))
                } catch {
                    preconditionFailure("PageBytes: rows were checked in init, yet \(error)")
                }
            }
        }
    }

    /// The rows as `Item`s (allocates: for tests and the odd caller).
    public var items: [Item] {
        var items: [Item] = []
        items.reserveCapacity(count)
        forEachRow { row in
            items.append(Item(id: row.id, fields: ItemFields(text: row.text, checked: row.checked, due: row.due,
                                                             remind: row.fields.remind, price: row.price,
                                                             clientKey: row.clientKey)))
        }
        return items
    }
}

extension ChecklistConnection {
    /// Fetches a page like `page(_:start:limit:filter:)`, but keeps it as
    /// its bytes (`PageBytes`): no `Item` or String per row. The answer is
    /// taken straight off the I/O thread, without decoding a
    /// `ServerMessage`. `requestTimeout` does not apply: the page comes, or
    /// the connection's end fails it. Cancelling the task does not end the
    /// wait either.
    ///
    /// - Throws: as `page(...)`; a server ERROR as `ClientError.server`.
    public func pageBytes(_ list: ListID, start: PageStart = .offset(0), limit: Int,
                          filter: RowFilter = .all) async throws -> PageBytes {
        let request = GetPage(list: list, filter: filter, start: start, limit: UInt64(clamping: limit))
        let limit = core.receiveLimit
        // An unsafe continuation (no checking canary to allocate): it is
        // resumed exactly once, by the handler (which `send` calls exactly
        // once once it returned) or by the catch below (when it threw).
        return try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<PageBytes, any Error>) in
            do throws(ClientError) {
                try core.send(.getPage(request)) { answer in
                    continuation.resume(with: Result { try Self.pageBytes(from: answer, filter: filter, limit: limit) })
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    private static func pageBytes(from answer: Result<(FrameHeader, UnsafeRawBufferPointer), ClientError>,
                                  filter: RowFilter, limit: UInt32) throws -> PageBytes {
        let (header, body) = try answer.get()
        guard header.type == .page else {
            if case .error(let e)? = try? ServerMessage.decode(header: header, body: body, maxFrameBytes: limit) {
                throw ClientError.server(e.error)
            }
            throw ClientError(.protocolViolation, "GET_PAGE answered with \(header.type)")
        }
        let bytes = try FrameBody.withMessageBytes(header: header, body: body, maxFrameBytes: limit) { (r) throws(ChecklistError) in
            Array(try r.readSlice("body", count: r.remaining))
        }
        do {
            return try PageBytes(body: bytes, filter: filter)
        } catch {
            throw ClientError(.protocolViolation, "cannot decode a PAGE: \(error)")
        }
    }
}
