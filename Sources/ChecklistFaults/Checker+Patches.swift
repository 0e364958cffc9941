import ChecklistModel
import ChecklistWire

/// One idempotency key: every attempt sent with it, and what they tell.
struct KeyedPatch {
    var key: IdempotencyKey
    var attempts: [Operation]
    var call: PatchCall
    /// The first PATCH_OK, if any.
    var ack: (op: Operation, revision: Revision, ids: [TempRefAssignment])?
    /// Whether a definite ERROR (not `UNAVAILABLE` and the like) answered it.
    var failed: Bool
    var firstInvokedAt: UInt64 { attempts[0].invokedAt }
    var client: Int { attempts[0].client }

    /// Groups the patch attempts of a history by key, in order of first sending.
    static func group(_ operations: [Operation]) -> [KeyedPatch] {
        var order: [IdempotencyKey] = []
        var byKey: [IdempotencyKey: KeyedPatch] = [:]
        for op in operations {
            guard case .patch(let call) = op.call else { continue }
            if byKey[call.key] == nil {
                order.append(call.key)
                byKey[call.key] = KeyedPatch(key: call.key, attempts: [], call: call, ack: nil, failed: false)
            }
            byKey[call.key]!.attempts.append(op)
            switch op.outcome {
            case let .patchOK(revision, ids):
                if byKey[call.key]!.ack.map({ ($0.op.completedAt ?? .max) > (op.completedAt ?? .max) }) ?? true {
                    byKey[call.key]!.ack = (op, revision, ids)
                }
            case .failed where !op.outcome.isUnknown: byKey[call.key]!.failed = true
            default: break
            }
        }
        return order.map { byKey[$0]! }
    }
}

extension Checker {
    /// Acknowledged inserts present once; no phantom; no failed patch
    /// applied; each acknowledged patch the change at its revision; no
    /// revision acknowledged twice; one answer per key; revisions growing
    /// per client and in real-time order.
    func checkPatches(_ finals: [ListID: Final], _ violations: inout [Violation]) {
        let patches = KeyedPatch.group(history.operations)
        var byKey: [IdempotencyKey: KeyedPatch] = [:]
        for patch in patches { byKey[patch.key] = patch }
        checkAnswersPerKey(patches, &violations)
        var ackedRevisions: [ListID: [Revision: [KeyedPatch]]] = [:]
        for patch in patches {
            guard let ack = patch.ack else { continue }
            ackedRevisions[patch.call.list, default: [:]][ack.revision, default: []].append(patch)
            guard let final = finals[patch.call.list] else { continue }
            guard let change = final.byRevision[ack.revision] else {
                violations.append(Violation(.ackNotInFeed, list: patch.call.list,
                                            "key \(patch.key) acknowledged at revision \(ack.revision) by node \(ack.op.node) at \(Self.seconds(ack.op.completedAt ?? 0)); the feed has no such revision (it ends at \(final.revision))"))
                continue
            }
            if let why = Self.mismatch(patch.call, ids: ack.ids, change) {
                violations.append(Violation(.ackNotInFeed, list: patch.call.list,
                                            "key \(patch.key) \(Describe.sent(patch.call.ops)) acknowledged at revision \(ack.revision) by node \(ack.op.node) at \(Self.seconds(ack.op.completedAt ?? 0)) (operation \(ack.op.id)); the change there is not it: \(why)"))
            }
        }
        for (list, revisions) in ackedRevisions.sorted(by: { $0.key < $1.key }) {
            for (revision, keys) in revisions.sorted(by: { $0.key < $1.key }) where keys.count > 1 {
                let who = keys.map { "key \($0.key) by node \($0.ack!.op.node) at \(Self.seconds($0.ack!.op.completedAt ?? 0))" }
                violations.append(Violation(.revisionAckedTwice, list: list, "revision \(revision) acknowledged to \(who.joined(separator: " and "))"))
            }
        }
        checkEffects(patches, byKey, finals, &violations)
        checkOrder(patches, &violations)
    }

    /// One answer per key: every definite answer to a key's attempts is the same.
    func checkAnswersPerKey(_ patches: [KeyedPatch], _ violations: inout [Violation]) {
        for patch in patches {
            var first: (Operation, String)?
            for op in patch.attempts where !op.outcome.isUnknown {
                let answer: String
                switch op.outcome {
                case let .patchOK(revision, ids): answer = "PATCH_OK revision \(revision) ids \(ids.map { "\($0.tempRef)=\($0.id)" })"
                case let .failed(code, _, message): answer = "ERROR \(ChecklistError.Code(rawValue: code)) (\(message))"
                default: continue
                }
                guard let (op0, answer0) = first else { first = (op, answer); continue }
                if Self.answerKind(answer) != Self.answerKind(answer0) || (answer.hasPrefix("PATCH_OK") && answer != answer0) {
                    violations.append(Violation(.keyAnswersDiffer, list: patch.call.list,
                                                "key \(patch.key): attempt \(op0.attempt) to node \(op0.node) at \(Self.seconds(op0.invokedAt)) got \(answer0); attempt \(op.attempt) to node \(op.node) at \(Self.seconds(op.invokedAt)) got \(answer)"))
                    break
                }
            }
        }
    }

    /// Answers of the same kind: PATCH_OK, or an ERROR's code.
    private static func answerKind(_ answer: String) -> Substring {
        answer.hasPrefix("PATCH_OK") ? "PATCH_OK" : answer.prefix { $0 != "(" }
    }

    /// What the final feed and rows say each key did.
    func checkEffects(_ patches: [KeyedPatch], _ byKey: [IdempotencyKey: KeyedPatch], _ finals: [ListID: Final],
                      _ violations: inout [Violation]) {
        for (list, final) in finals.sorted(by: { $0.key < $1.key }) {
            // Where each key's texts (inserts and edits) appear in the feed.
            var revisionsOfKey: [IdempotencyKey: Set<Revision>] = [:]
            var deleted = Set<ItemID>()
            for change in final.feed {
                for op in change.operations {
                    let text: String
                    switch op {
                    case .insert(_, _, let fields): text = fields.text
                    case .setText(_, let t): text = t
                    case .delete(let id): deleted.insert(id); continue
                    default: continue
                    }
                    guard let (key, n, edit) = ItemText.parse(text), let patch = byKey[key], patch.call.list == list,
                          Self.sends(patch.call, n: n, edit: edit) else {
                        violations.append(Violation(.phantomItem, list: list, "revision \(change.revision): \(Describe.applied(op)) was sent by no client"))
                        continue
                    }
                    revisionsOfKey[key, default: []].insert(change.revision)
                }
            }
            for (key, revisions) in revisionsOfKey.sorted(by: { $0.key.sequence < $1.key.sequence }) {
                let patch = byKey[key]!
                if revisions.count > 1 {
                    violations.append(Violation(.keyAppliedTwice, list: list, "key \(key) took effect at revisions \(revisions.sorted()) (attempts: \(Self.describe(patch.attempts)))"))
                }
                if patch.ack == nil && patch.failed {
                    violations.append(Violation(.failedPatchApplied, list: list, "key \(key) was answered with an error but took effect at revision \(revisions.sorted()) (attempts: \(Self.describe(patch.attempts)))"))
                }
            }
            // Acknowledged inserts: present once, unless deleted.
            var idCounts: [ItemID: Int] = [:]
            var textCounts: [String: Int] = [:]
            for row in final.rows {
                idCounts[row.id, default: 0] += 1
                textCounts[row.text, default: 0] += 1
            }
            for (id, count) in idCounts where count > 1 {
                violations.append(Violation(.insertDuplicated, list: list, "item \(id) is in the list \(count) times"))
            }
            for (text, count) in textCounts where count > 1 {
                violations.append(Violation(.insertDuplicated, list: list, "\"\(text)\" is in the list \(count) times"))
            }
            // Without the whole feed, "never deleted" cannot be told (feedGap says why).
            for patch in patches where patch.call.list == list && final.complete {
                guard let ack = patch.ack else { continue }
                for assignment in ack.ids where !deleted.contains(assignment.id) && idCounts[assignment.id] == nil {
                    violations.append(Violation(.ackedInsertLost, list: list,
                                                "key \(patch.key)'s insert (tempRef \(assignment.tempRef)) acknowledged as item \(assignment.id) at revision \(ack.revision) by node \(ack.op.node) at \(Self.seconds(ack.op.completedAt ?? 0)) is not in the list and was never deleted"))
                }
            }
        }
    }

    /// Whether `call` has the insert (or edit) number `n`.
    static func sends(_ call: PatchCall, n: Int, edit: Bool) -> Bool {
        guard n < call.ops.count else { return false }
        switch call.ops[n] {
        case .insert: return !edit
        case .setText: return edit
        default: return false
        }
    }

    /// Why `change` is not what `call` acknowledged with `ids`; nil when it is.
    static func mismatch(_ call: PatchCall, ids: [TempRefAssignment], _ change: ListChange) -> String? {
        guard case .patched(let applied) = change.kind else { return "the feed has \(Describe.change(change))" }
        guard applied.count == call.ops.count else { return "the feed has \(Describe.change(change))" }
        let idOf = Dictionary(ids.map { ($0.tempRef, $0.id) }, uniquingKeysWith: { a, _ in a })
        for (sent, done) in zip(call.ops, applied) {
            let same: Bool
            switch (sent, done) {
            case let (.insert(tempRef, _, fields), .insert(id, _, doneFields)):
                same = fields.text == doneFields.text && (tempRef.flatMap { idOf[$0] }.map { $0 == id } ?? true)
            case let (.setText(.id(a), text), .setText(b, doneText)): same = a == b && text == doneText
            case let (.setChecked(.id(a), value), .setChecked(b, doneValue)): same = a == b && value == doneValue
            case let (.toggle(.id(a)), .setChecked(b, _)): same = a == b
            case let (.delete(.id(a)), .delete(b)): same = a == b
            case let (.move(.id(a), _), .move(b, _)): same = a == b
            default: same = false
            }
            if !same { return "the feed has \(Describe.change(change))" }
        }
        return nil
    }

    /// A short account of a key's attempts, for details.
    static func describe(_ attempts: [Operation]) -> String {
        attempts.map { op in
            let answer: String
            switch op.outcome {
            case let .patchOK(revision, _): answer = "PATCH_OK \(revision)"
            case let .failed(code, _, _): answer = "ERROR \(ChecklistError.Code(rawValue: code))"
            case .indeterminate(let why): answer = "no answer (\(why.prefix(60)))"
            case .pending: answer = "pending"
            default: answer = "?"
            }
            return "#\(op.attempt) node \(op.node) \(seconds(op.invokedAt))-\(op.completedAt.map(seconds) ?? "?"): \(answer)"
        }.joined(separator: "; ")
    }

    /// Revisions grow per client, and in real-time order: a patch
    /// acknowledged before another (of the same list) was first sent has
    /// the lower revision.
    func checkOrder(_ patches: [KeyedPatch], _ violations: inout [Violation]) {
        let acked = patches.filter { $0.ack != nil }
        for list in Set(acked.map(\.call.list)).sorted() {
            let mine = acked.filter { $0.call.list == list }
            // Per client, in the order the client sent them.
            var lastOfClient: [Int: KeyedPatch] = [:]
            for patch in mine.sorted(by: { $0.firstInvokedAt < $1.firstInvokedAt }) {
                if let before = lastOfClient[patch.client], before.ack!.revision >= patch.ack!.revision {
                    violations.append(Violation(.clientOrder, list: list,
                                                "client \(patch.client): key \(before.key) acknowledged at revision \(before.ack!.revision), then key \(patch.key), sent after, at revision \(patch.ack!.revision)"))
                }
                lastOfClient[patch.client] = patch
            }
            // Across clients: sweep the first sendings in time order, keeping
            // for each client its highest revision acknowledged so far.
            let byAck = mine.sorted { ($0.ack!.op.completedAt ?? 0) < ($1.ack!.op.completedAt ?? 0) }
            var next = 0
            var highest: [Int: KeyedPatch] = [:]
            for patch in mine.sorted(by: { $0.firstInvokedAt < $1.firstInvokedAt }) {
                while next < byAck.count, (byAck[next].ack!.op.completedAt ?? .max) < patch.firstInvokedAt {
                    let done = byAck[next]
                    if (highest[done.client]?.ack!.revision ?? 0) < done.ack!.revision { highest[done.client] = done }
                    next += 1
                }
                let worst = highest.filter { $0.key != patch.client }.values.max { $0.ack!.revision < $1.ack!.revision }
                if let worst, worst.ack!.revision >= patch.ack!.revision {
                    violations.append(Violation(.realTimeOrder, list: list,
                                                "key \(worst.key) was acknowledged at revision \(worst.ack!.revision) by node \(worst.ack!.op.node) at \(Self.seconds(worst.ack!.op.completedAt ?? 0)); key \(patch.key), first sent after that at \(Self.seconds(patch.firstInvokedAt)), was acknowledged at revision \(patch.ack!.revision) by node \(patch.ack!.op.node)"))
                }
            }
        }
    }
}
