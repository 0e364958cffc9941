import ChecklistModel

// The window as plain values and back, for snapshots.
extension IdempotencyWindow {
    /// The window as plain values: clients least recently used first, each
    /// client's answers oldest first. O(remembered answers); call it on a
    /// copy (a `StoreCut`'s) rather than under the store's lock.
    var memory: IdempotencyMemory {
        var memory = IdempotencyMemory()
        let byUse = clients.sorted { a, b in
            (a.value.lastUsed, a.key.namespace.rawValue, a.key.client) < (b.value.lastUsed, b.key.namespace.rawValue, b.key.client)
        }
        for (client, state) in byUse {
            var answers: [IdempotencyMemory.Answer] = []
            answers.reserveCapacity(state.answers.count)
            for i in 0..<state.order.count {
                let sequence = state.order[i]
                guard let answer = state.answers[sequence] else { continue }
                answers.append(IdempotencyMemory.Answer(sequence: sequence, list: answer.list, revision: answer.revision,
                                                        inserted: answer.inserted.runs))
            }
            memory.clients.append(IdempotencyMemory.Client(namespace: client.namespace, client: client.client,
                                                           floor: state.floor, answers: answers))
        }
        return memory
    }

    /// Adds `memory` (a snapshot's) to the window, client by client in its
    /// order: the floor first, then the answers oldest first, each as if its
    /// patch had just been committed. The window's bounds apply throughout,
    /// so a memory bigger than they allow keeps only what they allow.
    mutating func restore(_ memory: IdempotencyMemory) {
        for client in memory.clients {
            let key = ClientKey(namespace: client.namespace, client: client.client)
            restoreClient(key, floor: client.floor)
            for answer in client.answers {
                record(Answer(list: answer.list, revision: answer.revision, inserted: InsertedIDs(runs: answer.inserted)),
                       of: key, sequence: answer.sequence)
            }
        }
    }
}
