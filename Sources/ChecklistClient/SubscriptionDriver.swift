import ChecklistModel
import ChecklistWire

/// Runs one `ChecklistSync` subscription: connects, subscribes from the last
/// revision it reported of each list, turns pushes into `ChangeEvent`s and,
/// after a lost connection, a dropped subscription or lost pushes, starts
/// over from those revisions. Lives in one task; not shared.
///
/// Invariant: `lastSeen[list]` is the revision of the last change reported
/// (or the revision the subscription started from). A change is reported
/// only if it is the next revision, so events never skip or repeat; a gap
/// means pushes were lost, and subscribing again from `lastSeen` (the
/// server pushes the changes after it) closes it.
struct SubscriptionDriver: Sendable {
    /// The subscription's number in its `ChecklistSync` (for `Reconnection`).
    private let id: UInt64
    private var explicit: [ListID]
    private let allLists: Bool
    private var lastSeen: [ListID: Revision]
    private let retry: ChecklistSync.RetryPolicy
    private let connector: ChecklistSync.Connector
    private let onReconnect: (@Sendable (ChecklistSync.Reconnection) -> Void)?
    private let output: AsyncStream<ChangeEvent>.Continuation
    /// False until the first SUBSCRIBED: lists then new to `lastSeen` are
    /// just where the subscription starts; later they appeared meanwhile.
    private var resumed = false

    init(id: UInt64, lists: [ListID], allLists: Bool, revisions: [ListID: Revision], retry: ChecklistSync.RetryPolicy,
         connector: ChecklistSync.Connector, onReconnect: (@Sendable (ChecklistSync.Reconnection) -> Void)?,
         output: AsyncStream<ChangeEvent>.Continuation) {
        self.id = id
        var seen = Set<ListID>()
        explicit = lists.filter { seen.insert($0).inserted }
        self.allLists = allLists
        lastSeen = revisions
        self.retry = retry
        self.connector = connector
        self.onReconnect = onReconnect
        self.output = output
    }

    private enum Outcome {
        /// Nothing more to do (cancelled, consumer gone, nothing left to watch).
        case finished
        /// The connection is unusable: start over on a new one.
        case lost(String)
    }

    func run() async {
        var driver = self
        await driver.loop()
        output.finish()
    }

    private mutating func loop() async {
        var backoff = retry.initialBackoff
        // The connection last lost, until one is made again (its server is tried last).
        var loss: ChecklistSync.Loss?
        while !Task.isCancelled {
            let connection: ChecklistConnection
            do {
                connection = try await connector(lost: loss?.server)
            } catch {
                guard await emit(.interrupted("cannot connect: \(error)")), await pause(&backoff) else { return }
                continue
            }
            if let loss { onReconnect?(loss.reconnection(id, to: connection)) }
            loss = nil
            let outcome = await serve(connection, backoff: &backoff)
            await connection.close()
            switch outcome {
            case .finished:
                return
            case .lost(let why):
                loss = ChecklistSync.Loss(connection, why)
                guard await emit(.interrupted(why)), await pause(&backoff) else { return }
            }
        }
    }

    /// Subscribes on `connection` and reports its pushes until it is lost;
    /// subscribes again on the same connection after a drop or a gap.
    private mutating func serve(_ connection: ChecklistConnection, backoff: inout Duration) async -> Outcome {
        while !Task.isCancelled {
            let pushes = connection.livePushes()
            let answer: Subscribed
            do {
                answer = try await connection.subscribe(entries(), allLists: allLists)
            } catch let error as ClientError where error.code == .server {
                // E.g. BAD_STATE: this server has no live sync. Retrying will not help.
                _ = await emit(.interrupted("the server refused SUBSCRIBE: \(error)"))
                return .finished
            } catch {
                return .lost("\(error)")
            }
            backoff = retry.initialBackoff
            guard let start = await started(answer, on: connection) else { return .lost("the connection was lost while catching up") }
            guard start else { return .finished }
            var resubscribe = false
            for await push in pushes {
                switch push {
                case .change(let change):
                    switch await report(change) {
                    case .reported, .duplicate: continue
                    case .gap: resubscribe = true
                    case .done: return .finished
                    }
                case .dropped(let dropped):
                    guard await emit(.interrupted("the server dropped the subscription: \(dropped.message)")) else { return .finished }
                    resubscribe = true
                }
                if resubscribe { break }
            }
            if Task.isCancelled { return .finished }
            // The stream ended without a reason of ours: the connection closed, or pushes
            // overflowed its buffer (the connection is fine: subscribe again on it).
            if !resubscribe && connection.isClosed {
                return .lost(connection.closeReason.map { $0.message } ?? "the connection was lost")
            }
        }
        return .finished
    }

    /// The SUBSCRIBE entries: every list followed, from the revision reported last.
    private func entries() -> [Subscribe.Entry] {
        var entries = explicit.map { Subscribe.Entry(list: $0, revision: lastSeen[$0]) }
        if allLists {
            let named = Set(explicit)
            for list in lastSeen.keys.sorted() where !named.contains(list) {
                entries.append(Subscribe.Entry(list: list, revision: lastSeen[list]))
            }
        }
        return entries
    }

    /// Reports what SUBSCRIBED says and fetches the catch-ups the server
    /// would not push. Returns false when nothing is left to follow, nil
    /// when the connection failed.
    private mutating func started(_ answer: Subscribed, on connection: ChecklistConnection) async -> Bool? {
        var covered: [ListID: Revision] = [:]
        var fetch: [(ListID, Revision)] = []
        for entry in answer.entries {
            let list = entry.list
            switch entry.status {
            case .live:
                if lastSeen[list] == nil {
                    lastSeen[list] = entry.revision
                    // On a resumed all-lists subscription, a list new to it appeared meanwhile.
                    if resumed && allLists {
                        guard await emit(.resyncRequired(list: list, revision: entry.revision)) else { return false }
                    }
                }
                covered[list] = entry.revision
            case .resync:
                lastSeen[list] = entry.revision
                covered[list] = entry.revision
                guard await emit(.resyncRequired(list: list, revision: entry.revision)) else { return false }
            case .fetch:
                covered[list] = entry.revision
                fetch.append((list, entry.revision))
            case .notFound:
                forget(list)
                guard await emit(.listNotFound(list)) else { return false }
            }
        }
        resumed = true
        guard await emit(.subscribed(covered)) else { return false }
        for (list, target) in fetch {
            guard let caughtUp = await catchUp(list, to: target, on: connection) else { return nil }
            guard caughtUp else { return false }
        }
        return allLists || !explicit.isEmpty
    }

    /// Reads the changes of `list` after `lastSeen` up to `target` with
    /// CHANGES_SINCE. Returns false when the consumer is gone, nil when the
    /// connection failed.
    private mutating func catchUp(_ list: ListID, to target: Revision, on connection: ChecklistConnection) async -> Bool? {
        while let from = lastSeen[list], from < target {
            let page: Changes
            do {
                page = try await connection.changes(of: list, since: from)
            } catch let error as ClientError where error.wireCode == .resyncRequired {
                let revision = max(target, error.serverError?.revision ?? target)
                lastSeen[list] = revision
                return await emit(.resyncRequired(list: list, revision: revision))
            } catch let error as ClientError where error.wireCode == .notFound {
                forget(list)
                return await emit(.listNotFound(list))
            } catch {
                return nil
            }
            if page.changes.isEmpty { break }
            for change in page.changes {
                if await report(change) == .done { return false }
            }
        }
        return true
    }

    private enum Report: Equatable {
        case reported, duplicate, gap
        /// The consumer is gone, or nothing is left to follow.
        case done
    }

    /// Reports `change` if it is the next one of its list.
    private mutating func report(_ change: ListChange) async -> Report {
        if let last = lastSeen[change.list] {
            if change.revision <= last { return .duplicate }
            // An OMITTED change makes the consumer read the list anyway (an
            // import may move a revision on by more than one).
            if change.revision != last + 1 && change.kind != .omitted { return .gap }
        }
        guard await emit(.change(change)) else { return .done }
        if case .listDeleted = change.kind {
            forget(change.list)
            if !allLists && explicit.isEmpty { return .done }
        } else {
            lastSeen[change.list] = change.revision
        }
        return .reported
    }

    private mutating func forget(_ list: ListID) {
        lastSeen[list] = nil
        explicit.removeAll { $0 == list }
    }

    /// Hands `event` to the consumer, waiting while its buffer is full.
    /// False once the consumer is gone.
    private func emit(_ event: ChangeEvent) async -> Bool {
        var wait = Duration.milliseconds(1)
        while true {
            switch output.yield(event) {
            case .enqueued:
                return true
            case .dropped:
                guard (try? await Task.sleep(for: wait)) != nil else { return false }
                wait = min(wait * 2, .milliseconds(100))
            case .terminated:
                return false
            @unknown default:
                return false
            }
        }
    }

    /// Sleeps `backoff` (then doubles it, up to the maximum); false if cancelled.
    private func pause(_ backoff: inout Duration) async -> Bool {
        guard (try? await Task.sleep(for: backoff)) != nil else { return false }
        backoff = min(backoff * 2, retry.maxBackoff)
        return true
    }
}
