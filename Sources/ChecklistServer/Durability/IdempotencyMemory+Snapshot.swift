import ChecklistModel
import ChecklistPersistence
import ChecklistStore

// The store's memory of answered idempotency keys <-> the snapshot's
// IDEMPOTENCY records (Protocol/SNAPSHOT.md section 3.8), client by client.
extension SnapshotIdempotency {
    init(_ client: IdempotencyMemory.Client) {
        self.init(namespace: client.namespace, client: client.client, floor: client.floor,
                  answers: client.answers.map {
                      Answer(sequence: $0.sequence, list: $0.list, revision: $0.revision, inserted: $0.inserted)
                  })
    }
}

extension IdempotencyMemory.Client {
    init(_ record: SnapshotIdempotency) {
        self.init(namespace: record.namespace, client: record.client, floor: record.floor,
                  answers: record.answers.map {
                      IdempotencyMemory.Answer(sequence: $0.sequence, list: $0.list, revision: $0.revision, inserted: $0.inserted)
                  })
    }
}
