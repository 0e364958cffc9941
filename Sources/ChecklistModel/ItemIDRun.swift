/// Consecutive item ids: `first`, `first + 1`, ..., `count` ids in all.
///
/// How the ids a patch's inserts got are remembered for a retry
/// (Protocol/SPEC.md section 9): a batch's inserts take fresh ids from the
/// list's counter one after another, so one run almost always covers them,
/// whatever their number.
public struct ItemIDRun: Hashable, Sendable {
    public var first: ItemID
    public var count: UInt64

    public init(first: ItemID, count: UInt64) {
        self.first = first
        self.count = count
    }

    /// `ids` as runs, in order: each longest stretch of ids that go up by
    /// exactly one becomes one run. Empty for no ids.
    public static func runs(of ids: some Sequence<ItemID>) -> [ItemIDRun] {
        var runs: [ItemIDRun] = []
        for id in ids {
            if let last = runs.last, last.first.rawValue &+ last.count == id.rawValue, id.rawValue != 0 {
                runs[runs.count - 1].count += 1
            } else {
                runs.append(ItemIDRun(first: id, count: 1))
            }
        }
        return runs
    }
}
