import ChecklistCommandLine
import ChecklistModel
import ChecklistSocket
import ChecklistTLS
import ChecklistWire

/// What each request of the load scenario is.
enum LoadRequestKind: Int, CaseIterable, Sendable {
    /// GET_PAGE of `pageSize` rows at a random offset of a random load list.
    case page
    /// PATCH toggling one random item of a random load list (the row count
    /// and order never change, so every page stays checkable).
    case patch
    /// LIST_LISTS.
    case lists
    /// PATCH inserting one item at the end of a random load list, its text
    /// `--text-bytes` bytes (at least `item N`): the shape of Redis's
    /// LPUSH. Lists grow, so it mixes with no `page` or `lists`.
    case insert

    var name: String {
        switch self {
        case .page: return "page"
        case .patch: return "patch"
        case .lists: return "lists"
        case .insert: return "insert"
        }
    }

    /// Whether the request writes (PATCH), and so goes to a list of `LoadPlan.writeList`.
    var writes: Bool { self == .patch || self == .insert }
}

/// `--mix page=70,patch=20,lists=10`: relative weights of the request kinds.
struct LoadMix: Sendable, CustomStringConvertible {
    private(set) var weights: [Int]  // indexed by LoadRequestKind.rawValue
    private let total: Int

    init(_ text: String) throws {
        var weights = [Int](repeating: 0, count: LoadRequestKind.allCases.count)
        for part in text.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, let kind = LoadRequestKind.allCases.first(where: { $0.name == pair[0] }),
                  let weight = Int(pair[1]), weight >= 0 else {
                throw UsageError("--mix: '\(part)' is not KIND=WEIGHT (kinds: page, patch, lists, insert)")
            }
            weights[kind.rawValue] = weight
        }
        self.weights = weights
        total = weights.reduce(0, +)
        guard total > 0 else { throw UsageError("--mix: the weights add up to 0") }
        if weights[LoadRequestKind.insert.rawValue] > 0
            && weights[LoadRequestKind.page.rawValue] + weights[LoadRequestKind.lists.rawValue] > 0 {
            throw UsageError("--mix: insert grows the lists, so it mixes with patch only")
        }
    }

    /// The kind for a uniformly random `draw`.
    func pick(_ draw: UInt64) -> LoadRequestKind {
        var r = Int(draw % UInt64(total))
        for kind in LoadRequestKind.allCases {
            r -= weights[kind.rawValue]
            if r < 0 { return kind }
        }
        return .page
    }

    var description: String {
        LoadRequestKind.allCases.filter { weights[$0.rawValue] > 0 }.map { "\($0.name)=\(weights[$0.rawValue])" }
            .joined(separator: ",")
    }
}

/// `--writes random|by-node`: which load lists a connection's PATCHes go to.
enum LoadWrites: String, Sendable {
    /// Any load list (every node writes every list: the worst case for
    /// several nodes, whose commits of one list take turns).
    case random
    /// With `--nodes N`, a connection on node k writes only the load lists
    /// whose index is k modulo N (users whose devices each write their own
    /// lists); its reads stay random. With one node, as `random`.
    case byNode = "by-node"
}

/// Everything the load threads need to know, fixed before they start.
struct LoadPlan: Sendable {
    var address: SocketAddress
    /// With `--nodes N`: every node's address; connection slot `i` goes to `nodes[i % N]`.
    var nodes: [SocketAddress] = []
    var connections: Int
    var threads: Int
    /// Closed loop: requests kept outstanding per connection. Open loop: the
    /// most outstanding per connection; due requests beyond it wait (and
    /// their latency counts from when they were due).
    var pipeline: Int
    /// Requests per second over all connections (open loop); nil: closed loop.
    var rate: Double?
    var mix: LoadMix
    /// Which load lists a connection's PATCHes go to.
    var writes: LoadWrites = .random
    /// The load lists, each holding `items` rows "item 0", "item 1", ...
    /// with ids 1, 2, ... in that order.
    let lists: [ListID]
    /// Position in `lists` of each load list id.
    let listIndex: [UInt64: Int]
    var items: Int
    var pageSize: Int
    /// Where GET_PAGE starts: nil, a random offset; else this one.
    var pageOffset: Int?
    /// `--text-bytes`: each text is `item N` padded with dots to this many
    /// bytes (0: not padded).
    var textBytes: Int
    /// The operation of every `insert` request, encoded: INSERT at the end
    /// of the text `item <items>` padded to `textBytes` bytes.
    let insertOperation: [UInt8]
    /// `--compression on`: HELLO announces COMPRESSION, compressed answers are inflated.
    var compression: Bool
    var maxFrameBytes: UInt32
    var seed: UInt64
    /// With a client context, every connection speaks TLS, verifying that
    /// the server's certificate names `serverName`; nil: plaintext.
    var tls: TLSContext?
    var serverName: String

    init(address: SocketAddress, connections: Int, threads: Int, pipeline: Int, rate: Double?, mix: LoadMix,
         lists: [ListID], items: Int, pageSize: Int, pageOffset: Int? = nil, textBytes: Int = 0, compression: Bool = false,
         maxFrameBytes: UInt32, seed: UInt64, tls: TLSContext? = nil, serverName: String = "") {
        self.tls = tls
        self.serverName = serverName
        self.address = address
        self.connections = connections
        self.threads = threads
        self.pipeline = pipeline
        self.rate = rate
        self.mix = mix
        self.lists = lists
        self.listIndex = Dictionary(uniqueKeysWithValues: lists.enumerated().map { ($1.rawValue, $0) })
        self.items = items
        self.pageSize = pageSize
        self.pageOffset = pageOffset
        self.textBytes = textBytes
        var w = WireWriter()
        PatchOperation.insert(tempRef: nil, position: .end, fields: ItemFields(text: Self.itemText(items, textBytes: textBytes)))
            .encode(into: &w)
        insertOperation = w.bytes
        self.compression = compression
        self.maxFrameBytes = maxFrameBytes
        self.seed = seed
    }

    /// The text of row `index` of a load list: `item <index>`, padded with
    /// dots to `textBytes` bytes.
    static func itemText(_ index: Int, textBytes: Int) -> String {
        let text = "item \(index)"
        return text.utf8.count >= textBytes ? text : text + String(repeating: ".", count: textBytes - text.utf8.count)
    }

    /// The index (in `lists`) of the load list a PATCH of connection `slot`
    /// goes to, for a uniformly random `draw`: any list (`random`), or one
    /// of those of the connection's node (`by-node`: index k, k + N, ...
    /// on node k of N).
    func writeList(slot: Int, draw: UInt64) -> Int {
        let nodeCount = max(1, nodes.count)
        guard writes == .byNode, nodeCount > 1 else { return Int(draw % UInt64(lists.count)) }
        let node = slot % nodeCount
        let owned = (lists.count - node + nodeCount - 1) / nodeCount
        return node + nodeCount * Int(draw % UInt64(max(1, owned)))
    }

    /// The connections worker `index` drives: every `threads`-th one.
    func slots(ofWorker index: Int) -> [Int] {
        Array(stride(from: index, to: connections, by: threads))
    }
}
