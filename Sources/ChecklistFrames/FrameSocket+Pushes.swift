import ChecklistModel
import ChecklistWire

extension FrameSocket {
    /// Reads CHANGE pushes until SUBSCRIPTION_DROPPED arrives: what a
    /// subscriber that stopped reading finds once it reads again. Returns the
    /// revisions pushed, in order, and the drop; any other frame throws.
    public func receivePushesUntilDropped() throws -> (revisions: [Revision], dropped: SubscriptionDropped) {
        var revisions: [Revision] = []
        while true {
            switch try receive().message {
            case .changePush(let push): revisions.append(push.change.revision)
            case .subscriptionDropped(let dropped): return (revisions, dropped)
            case let other: throw Failure("expected CHANGE or SUBSCRIPTION_DROPPED, got message type \(other.type)")
            }
        }
    }
}
