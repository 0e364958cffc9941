import ChecklistModel
import ChecklistPostgres
import Testing

@Suite(.enabled(if: TestCluster.binariesFound, TestCluster.skipReason), .timeLimit(.minutes(2)))
struct IdempotencyTests {
    /// A client id above 2^63 (clients pick them at random) is kept exactly.
    let client: UInt64 = 0xF00D_0000_0000_0001

    func answer(_ sequence: UInt64, revision: Revision) -> IdempotencyMemory.Answer {
        IdempotencyMemory.Answer(sequence: sequence, list: ListID(1), revision: revision,
                                 inserted: [ItemIDRun(first: ItemID(sequence * 10), count: 2)])
    }

    @Test func answersRoundTripWithTheirCommit() throws {
        let (store, _) = try TestCluster.freshStore()
        try store.commit([Fixture.create(1)])
        for sequence in 1...3 as ClosedRange<UInt64> {
            try store.commit([Fixture.rename(1, from: sequence, to: "v\(sequence)",
                                             answer: RememberedAnswer(client: client, answer: answer(sequence, revision: sequence + 1)))])
        }
        #expect(try store.lookUp(namespace: .default, client: client, sequence: 2) == .answered(answer(2, revision: 3)))
        #expect(try store.lookUp(namespace: .default, client: client, sequence: 9) == .unknown)
        #expect(try store.lookUp(namespace: .default, client: 7, sequence: 1) == .unknown)
        let memory = try store.idempotencyMemory()
        #expect(memory.clients.count == 1)
        #expect(memory.clients[0].client == client)
        #expect(memory.clients[0].answers.map(\.sequence) == [1, 2, 3])

        #expect(try store.forgetAnswers(keepPerClient: 1) == 2)
        #expect(try store.lookUp(namespace: .default, client: client, sequence: 1) == .forgotten)
        #expect(try store.lookUp(namespace: .default, client: client, sequence: 3) == .answered(answer(3, revision: 4)))
        #expect(try store.lookUp(namespace: .default, client: client, sequence: 4) == .unknown)
        #expect(try store.idempotencyMemory().clients[0].floor == 2)
    }

    @Test func anAnswerIsNotKeptWhenItsCommitFails() throws {
        let (store, _) = try TestCluster.freshStore()
        try store.commit([Fixture.create(1), Fixture.rename(1, from: 1, to: "Now")])
        let stale = Fixture.rename(1, from: 1, to: "Stale", answer: RememberedAnswer(client: client, answer: answer(1, revision: 2)))
        #expect(throws: PostgresError.self) { try store.commit([stale]) }
        #expect(try store.lookUp(namespace: .default, client: client, sequence: 1) == .unknown)
    }
}
