import ChecklistModel
import ChecklistStorage
import ChecklistWire

/// A request that waits for database reads before it can be handled
/// (`RequestOutcome.parked`): decoded once, kept with what resuming it
/// needs. Its frame is consumed; the connection reads nothing meanwhile
/// (so answers keep request order) while the loop serves its other
/// connections, and once the reads are done the request goes back to
/// `ProtocolSession.resume`, never parsed or decoded again.
struct ParkedRequest {
    /// The request, as decoded from its frame.
    let request: Request
    let requestID: UInt32
    /// Pins on the request's lists already in memory, so that they stay
    /// while it waits; given back when it is resumed or dropped.
    let pins: [ListID]
    /// The reads it waits for.
    let load: ListLoadRequest
}
