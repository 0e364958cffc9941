import ChecklistEventLoop
import ChecklistModel
import ChecklistStore

/// The PATCHes that the connections of one event loop read in one turn,
/// committed together at the turn's end: one hold of the store's lock, one
/// log append, one publish for all of them, instead of one of each per
/// connection. Two loops that commit at once then meet at the lock once a
/// turn, not once a connection.
///
/// A connection whose read ends with PATCHes staged (and nothing else to
/// do) joins the group (`enlist`); at the turn's end (`loopTurnEnds`, before
/// the loop flushes its output) the group applies every member's batch in
/// the order they joined and has each member answer its own, in request
/// order, exactly as the member would have alone (`ProtocolHandler.
/// finishGroupCommit`). A member that must do something else first (more
/// input, a close, the shutdown) commits its batch alone on the spot
/// (`ProtocolHandler.settleGroupCommit`) and is skipped here.
///
/// Owned by its loop: made for it when the server starts, used only on its
/// thread (reached through a `LoopBound`).
final class PatchCommitGroup: LoopTurnObserver {
    private let loop: EventLoop
    private let store: Store
    /// The members, in the order they joined, with their connections.
    private var members: [(handler: ProtocolHandler, connection: SocketConnection)] = []
    // Reused from turn to turn: a warm group allocates nothing.
    private var batches: [PatchBatch] = []
    private var results: [Result<PatchAnswer, ChecklistError>] = []

    init(loop: EventLoop, store: Store) {
        self.loop = loop
        self.store = store
    }

    /// Adds `handler`, whose staged PATCHes wait for the turn's end (once
    /// a round: `ProtocolHandler.isInCommitGroup`; a member listed twice
    /// would have its batch applied twice).
    func enlist(_ handler: ProtocolHandler, _ connection: SocketConnection) {
        if members.isEmpty { loop.atTurnEnd(self) }
        members.append((handler, connection))
    }

    func loopTurnEnds() {
        var members: [(handler: ProtocolHandler, connection: SocketConnection)] = []
        swap(&members, &self.members)
        defer {
            members.removeAll(keepingCapacity: true)
            if self.members.isEmpty { self.members = members }
        }
        // Members join once a turn; from here on, a join is for the next round.
        for member in members { member.handler.isInCommitGroup = false }
        let logBefore = members.first?.handler.durability.logPosition
        for member in members where member.handler.awaitsGroupCommit {
            member.handler.appendStagedBatch(to: &batches)
        }
        store.patch(batches: batches, into: &results)
        // The members' staged arrays must be theirs alone again before they
        // are emptied (else each would be copied).
        batches.removeAll(keepingCapacity: true)
        var next = results.startIndex
        for member in members where member.handler.awaitsGroupCommit {
            let count = member.handler.session.stagedRequestCount
            member.handler.finishGroupCommit(results[next..<next + count], logBefore: logBefore, member.connection)
            next += count
        }
        results.removeAll(keepingCapacity: true)
    }
}
