import ChecklistModel

/// A request parked until lists are loaded (`RequestOutcome.listLoad`):
/// its frame stays in the connection's input, the connection reads
/// nothing meanwhile, and once the loads are done the same frame is
/// handed to the session again (so answers keep request order).
struct ListLoadRequest: Sendable, Hashable {
    var namespace: Namespace
    /// The lists to load; the session holds pins on them.
    var lists: [ListID]
}
