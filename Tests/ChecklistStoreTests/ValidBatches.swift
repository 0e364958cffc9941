import ChecklistModel
import ChecklistRandom

/// Generates batches that are valid for a list, by simulating each
/// operation on a plain array as it is generated.
struct ValidBatches {
    var items: [Item]
    var nextItemID: UInt64
    /// Temp refs of the current batch, and items deleted in it.
    var temps: [UInt64: ItemID] = [:]
    var deleted: [ItemID] = []

    init(items: [Item], nextItemID: UInt64) {
        self.items = items
        self.nextItemID = nextItemID
    }

    init(_ list: ReferenceStore.List) {
        self.init(items: list.items, nextItemID: list.nextItemID)
    }

    /// A reference to a random existing item: by id, or by temp ref when it
    /// was inserted in this batch.
    private func ref(_ index: Int, _ rng: inout SplitMix64) -> ItemRef {
        let id = items[index].id
        if let temp = temps.first(where: { $0.value == id })?.key, rng.chance(50) { return .temp(temp) }
        return .id(id)
    }

    /// `count` valid operations; keeps the list between `minRows` and
    /// `maxRows` rows.
    mutating func batch(_ count: Int, minRows: Int = 0, maxRows: Int = 400, _ rng: inout SplitMix64) -> [PatchOperation] {
        temps = [:]
        deleted = []
        var ops: [PatchOperation] = []
        for _ in 0..<count {
            let roll = items.count <= minRows ? 0 : items.count >= maxRows ? 50 : Int.random(in: 0..<100, using: &rng)
            var fields = Samples.fields(&rng)
            fields.text = String(fields.text.prefix(10))
            switch roll {
            case 0..<35:
                let id = ItemID(nextItemID)
                nextItemID += 1
                var tempRef: UInt64?
                if rng.chance(50) {
                    tempRef = UInt64(temps.count + 1)
                    temps[tempRef!] = id
                }
                let position: InsertPosition
                let at: Int
                switch items.isEmpty ? 2 : Int.random(in: 0..<3, using: &rng) {
                case 0:
                    at = Int.random(in: 0...items.count, using: &rng)
                    position = .index(UInt64(at))
                case 1:
                    let after = Int.random(in: 0..<items.count, using: &rng)
                    position = .after(ref(after, &rng))
                    at = after + 1
                default:
                    at = items.count
                    position = .end
                }
                items.insert(Item(id: id, fields: fields), at: at)
                ops.append(.insert(tempRef: tempRef, position: position, fields: fields))
            case 35..<50:
                let i = Int.random(in: 0..<items.count, using: &rng)
                switch Int.random(in: 0..<6, using: &rng) {
                case 0: ops.append(.setText(ref(i, &rng), fields.text)); items[i].fields.text = fields.text
                case 1: ops.append(.toggle(ref(i, &rng))); items[i].fields.checked.toggle()
                case 2: ops.append(.setChecked(ref(i, &rng), fields.checked)); items[i].fields.checked = fields.checked
                case 3: ops.append(.setDue(ref(i, &rng), fields.due)); items[i].fields.due = fields.due
                case 4: ops.append(.setRemind(ref(i, &rng), fields.remind)); items[i].fields.remind = fields.remind
                default: ops.append(.setPrice(ref(i, &rng), fields.price)); items[i].fields.price = fields.price
                }
            case 50..<75:
                let i = Int.random(in: 0..<items.count, using: &rng)
                ops.append(.delete(ref(i, &rng)))
                deleted.append(items.remove(at: i).id)
            default:
                let from = Int.random(in: 0..<items.count, using: &rng)
                let to = Int.random(in: 0..<items.count, using: &rng)
                ops.append(.move(ref(from, &rng), toIndex: UInt64(to)))
                items.insert(items.remove(at: from), at: to)
            }
        }
        return ops
    }

    /// An operation that must fail on the list as the batch so far left it,
    /// with the code and field it must fail with.
    func failingOperation(_ rng: inout SplitMix64) -> (PatchOperation, ChecklistError.Code, String?) {
        let someone: ItemRef = items.isEmpty ? .id(ItemID(1)) : .id(items[Int.random(in: 0..<items.count, using: &rng)].id)
        var choices: [(PatchOperation, ChecklistError.Code, String?)] = [
            (.delete(.id(ItemID(1_000_000))), .notFound, nil),
            (.insert(tempRef: nil, position: .index(UInt64(items.count + 1)), fields: ItemFields(text: "x")), .badField, "index"),
            (.setText(.temp(77_777), "x"), .badField, "ref"),
            (.insert(tempRef: 0, position: .end, fields: ItemFields(text: "x")), .badField, "tempRef"),
            (.insert(tempRef: nil, position: .end, fields: ItemFields(text: String(repeating: "x", count: 31))), .limitExceeded, "text"),
        ]
        if !items.isEmpty {
            choices.append((.move(someone, toIndex: UInt64(items.count)), .badField, "toIndex"))
            choices.append((.setText(someone, String(repeating: "ü", count: 16)), .limitExceeded, "text"))
        }
        if let temp = temps.keys.first {
            choices.append((.insert(tempRef: temp, position: .end, fields: ItemFields(text: "x")), .badField, "tempRef"))
        }
        if let gone = deleted.first {
            choices.append((.toggle(.id(gone)), .notFound, nil))
        }
        return choices.randomElement(using: &rng)!
    }
}
