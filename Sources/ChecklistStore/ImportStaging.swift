import ChecklistModel

/// The lists of an import, built and checked outside the store's lock,
/// one row at a time, in the compact form the store keeps rows in (never an
/// array of `Item`s). Hand the finished staging to `Store.importLists`,
/// which applies all of it or nothing.
///
/// ```swift
/// var staging = store.makeImportStaging()
/// try staging.beginList(StagedListHeader(sourceID: ListID(7), name: "Groceries", ...))
/// try staging.append(Item(id: ItemID(1), fields: ItemFields(text: "Milk")))
/// let result = try store.importLists(staging, mode: .merge, namespace: ns)
/// ```
///
/// Every error names the list (its id in the snapshot) and, for an item,
/// the item id: `.badField` ("name", "revision", "nextItemID", "id",
/// "list", "clientKey"), `.limitExceeded` ("name", "icon", "text", "lists",
/// "clientKey") or `.duplicateKey` (two items of a list with one key).
public struct ImportStaging: Sendable {
    /// A list's metadata as the snapshot (or other source) gives it.
    public struct ListHeader: Hashable, Sendable {
        /// The list's namespace in the source; replaced by the importing
        /// connection's namespace over the protocol.
        public var namespace: Namespace
        /// Its id in the source: kept when possible (see `Store.importLists`).
        public var sourceID: ListID
        public var name: String
        public var icon: String
        public var revision: Revision
        public var nextItemID: ItemID

        public init(namespace: Namespace, sourceID: ListID, name: String, icon: String, revision: Revision, nextItemID: ItemID) {
            self.namespace = namespace
            self.sourceID = sourceID
            self.name = name
            self.icon = icon
            self.revision = revision
            self.nextItemID = nextItemID
        }
    }

    struct StagedList: Sendable {
        var header: ListHeader
        /// The rows, finished (`finish()`) once the next list begins or the
        /// staging is sealed.
        var builder: RowTreeBuilder
        var rows: RowTree { builder.result }
        var keys = ClientKeyIndex()
    }

    /// Text limits to enforce, or nil (data accepted once already).
    let limits: Limits?
    let shape: RowTreeShape
    /// Most lists one import may hold.
    public let maxLists: Int
    private(set) var lists: [StagedList] = []
    private var sourceIDs: Set<ListID> = []
    /// Items staged so far, in all lists.
    public private(set) var itemCount = 0

    init(limits: Limits?, shape: RowTreeShape, maxLists: Int) {
        self.limits = limits
        self.shape = shape
        self.maxLists = maxLists
    }

    /// Lists staged so far.
    public var listCount: Int { lists.count }

    /// Starts the next list; its items follow with `append`.
    public mutating func beginList(_ header: ListHeader) throws(ChecklistError) {
        let what = "list \(header.sourceID) of the import"
        guard lists.count < maxLists else {
            throw ChecklistError(.limitExceeded, "an import holds at most \(maxLists) lists", field: "lists")
        }
        guard header.sourceID.rawValue != 0 else { throw .badField("list", "\(what): list id must not be 0") }
        guard sourceIDs.insert(header.sourceID).inserted else { throw .badField("list", "\(what) appears twice") }
        guard !header.name.isEmpty else { throw .badField("name", "\(what): name must not be empty") }
        guard header.revision >= 1 else { throw .badField("revision", "\(what): revision must be at least 1") }
        guard header.nextItemID.rawValue >= 1, header.nextItemID.rawValue < UInt64.max else {
            throw .badField("nextItemID", "\(what): nextItemID \(header.nextItemID) is out of range")
        }
        if let limits {
            try Self.context(what) { () throws(ChecklistError) in
                try Validation.text(header.name, field: "name", limits: limits)
                try Validation.text(header.icon, field: "icon", limits: limits)
            }
        }
        seal()
        lists.append(StagedList(header: header, builder: RowTreeBuilder(shape: shape)))
    }

    /// Finishes the last list's tree (a new list does it for the one
    /// before). `Store.importLists` seals a staging that is not, before it
    /// takes the store's lock.
    public mutating func seal() {
        if let last = lists.indices.last, !lists[last].builder.finished { lists[last].builder.finish() }
    }

    /// Whether every list's tree is finished.
    var isSealed: Bool { lists.last.map { $0.builder.finished } ?? true }

    /// Appends the current list's next row.
    public mutating func append(_ item: Item) throws(ChecklistError) {
        try item.withView { (row) throws(ChecklistError) in try append(row) }
    }

    /// Appends the current list's next row, its text lent (copied into the
    /// staging), with the checks of `append(_: Item)`.
    public mutating func append(_ row: ImportedItems.View) throws(ChecklistError) {
        guard let last = lists.indices.last else { throw .badField("id", "an item came before any list") }
        // The header's fields are read in place: a copy of the header
        // (its strings retained and released) per row costs more than the
        // row's own work.
        guard row.id.rawValue != 0, row.id < lists[last].header.nextItemID else {
            throw .badField("id", "\(Self.what(lists[last].header, row)): the id is not between 1 and the list's nextItemID \(lists[last].header.nextItemID)")
        }
        if let limits, row.text.count > Int(limits.maxTextBytes) {
            try Self.context(Self.what(lists[last].header, row)) { () throws(ChecklistError) in
                try Validation.textBytes(row.text.count, field: "text", limits: limits)
            }
        }
        if let key = row.clientKey {
            let header = lists[last].header
            try Self.context(Self.what(header, row)) { () throws(ChecklistError) in
                try ClientKey.validate(key)
                try lists[last].keys.checkFree(key, for: row.id, in: header.sourceID)
            }
        }
        guard lists[last].builder.append(row) else { throw .badField("id", "\(Self.what(lists[last].header, row)) appears twice") }
        if let key = row.clientKey { lists[last].keys.set(key, for: row.id) }
        itemCount += 1
    }

    /// Appends a batch of the current list's next rows (built off this
    /// thread, `RowBatchBuilder`), with the checks, and the error for the
    /// same first bad row, of appending them one by one.
    public mutating func append(_ batch: RowBatch) throws(ChecklistError) {
        guard let last = lists.indices.last else { throw .badField("id", "an item came before any list") }
        let next = lists[last].header.nextItemID.rawValue
        // The rows before the first one a check refuses go in whole; that
        // row (or the first repeated id) is then appended alone, which
        // throws its error.
        let limit = batch.firstRow(idOutside: 1..<max(next, 1), textLongerThan: limits.map { Int($0.maxTextBytes) }) ?? batch.count
        let appended = lists[last].builder.append(batch, limit: limit) ?? limit
        itemCount += appended
        guard appended < batch.count else { return }
        try batch.withRow(at: appended) { (row) throws(ChecklistError) in try append(row) }
        preconditionFailure("ImportStaging: row \(appended) of a batch was refused, then taken alone")
    }

    private static func what(_ header: ListHeader, _ row: ImportedItems.View) -> String {
        "list \(header.sourceID) of the import, item \(row.id)"
    }

    /// Runs `body`, prefixing the message of its error with `what`.
    private static func context(_ what: String, _ body: () throws(ChecklistError) -> Void) throws(ChecklistError) {
        do { try body() } catch {
            throw ChecklistError(error.code, "\(what): \(error.message)", field: error.field, revision: error.revision)
        }
    }
}
