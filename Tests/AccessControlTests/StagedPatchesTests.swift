@testable import ChecklistServer
import ChecklistModel
import ChecklistWire
import Testing

/// A read's PATCHes staged with their operations in one array: each request
/// gets exactly its own operations, a refused or dropped PATCH leaves none
/// behind, and the arrays start over for the next batch.
@Suite struct StagedPatchesTests {
    static func insert(_ text: String) -> PatchOperation {
        .insert(tempRef: nil, position: .end, fields: ItemFields(text: text))
    }

    static let patches = [
        Patch(list: ListID(1), ops: [insert("a"), insert("b")]),
        Patch(list: ListID(2), baseRevision: 7, ops: [.toggle(.id(ItemID(3)))]),
        Patch(list: ListID(1), idempotencyKey: IdempotencyKey(client: 9, sequence: 4), ops: [insert("c"), .delete(.id(ItemID(1))), insert("d")]),
    ]

    /// Decodes `patch` into `staged` and stages it.
    static func stage(_ patch: Patch, requestID: UInt32, into staged: inout StagedPatches) throws {
        let decoded = try WireReader.decode(patch.encodedBody()) { r throws(ChecklistError) in try staged.decode(from: &r) }
        staged.add(decoded, requestID: requestID)
    }

    @Test func eachRequestGetsItsOwnOperations() throws {
        var staged = StagedPatches()
        for round in 0..<2 {  // the second batch reuses the arrays
            try Self.stage(Self.patches[0], requestID: 1, into: &staged)
            staged.refuse(ChecklistError(.rateLimited, "slow down"), requestID: 2)
            // Decoded, then not staged (over the rate limit): its operations go.
            let dropped = try WireReader.decode(Self.patches[1].encodedBody()) { r throws(ChecklistError) in
                try staged.decode(from: &r)
            }
            staged.drop(dropped.ops)
            for (i, patch) in Self.patches.enumerated() { try Self.stage(patch, requestID: UInt32(3 + i), into: &staged) }
            staged.seal()
            let expected = [Self.patches[0]] + Self.patches
            #expect(staged.requests.map { Array($0.ops) } == expected.map(\.ops), "round \(round)")
            #expect(staged.requests.map(\.list) == expected.map(\.list))
            #expect(staged.requests.map(\.baseRevision) == expected.map(\.baseRevision))
            #expect(staged.requests.map(\.idempotencyKey) == expected.map(\.idempotencyKey))
            #expect(staged.entries.map(\.requestID) == [1, 2, 3, 4, 5])
            #expect(staged.entries.map { $0.refusal?.code } == [nil, .rateLimited, nil, nil, nil])
            staged.removeAll()
            #expect(staged.isEmpty && staged.requests.isEmpty)
        }
    }

    @Test func aPatchStagedAfterSealingKeepsTheOthersRight() throws {
        var staged = StagedPatches()
        try Self.stage(Self.patches[0], requestID: 1, into: &staged)
        staged.seal()
        let sealed = staged.requests  // shares the operations' array
        try Self.stage(Self.patches[2], requestID: 2, into: &staged)
        staged.seal()
        #expect(staged.requests.map { Array($0.ops) } == [Self.patches[0].ops, Self.patches[2].ops])
        #expect(sealed.map { Array($0.ops) } == [Self.patches[0].ops])
    }

    @Test func storageGoesBackOnlyWhenNothingIsStaged() throws {
        var staged = StagedPatches()
        try Self.stage(Self.patches[0], requestID: 1, into: &staged)
        staged.releaseStorage()
        #expect(staged.count == 1, "a staged PATCH stays")
        staged.removeAll()
        staged.releaseStorage()
        #expect(staged.isEmpty)
        try Self.stage(Self.patches[1], requestID: 2, into: &staged)
        staged.seal()
        #expect(staged.requests.map { Array($0.ops) } == [Self.patches[1].ops])
    }
}
