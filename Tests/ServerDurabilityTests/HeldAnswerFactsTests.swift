import ChecklistModel
import ChecklistWire
import Testing
@testable import ChecklistServer
@testable import ChecklistStorage

/// A held answer is replaced from what was noted as it was written (its
/// request id, what a PATCH_OK reports), never from its bytes, which may be
/// compressed.
@Suite struct HeldAnswerFactsTests {
    /// The writer notes a PATCH_OK's request id, list and revision, also
    /// when the frame it wrote is compressed; the next answer clears them.
    @Test func theWriterNotesWhatAPatchOKReports() {
        var answers = AnswerWriter()
        answers.encoder = FrameEncoder(compress: true)
        let ids = (0..<200).map { TempRefAssignment(tempRef: UInt64($0), id: ItemID(UInt64($0) + 1_000)) }
        answers.append(PatchOK(list: ListID(42), revision: 7, ids: ids), requestID: 61)
        #expect(answers.lastKind == .patchOK)
        #expect(answers.lastRequestID == 61)
        #expect(answers.lastPatched == PatchedRevision(list: ListID(42), revision: 7))
        answers.fail(ChecklistError(.conflict, "stale"), requestID: 62)
        #expect(answers.lastRequestID == 62)
        #expect(answers.lastPatched == nil)
    }

    /// A rebased PATCH_OK is encoded from the noted list and request id
    /// with the revision and ids the rebase gave; a patch committed as it
    /// was keeps its answer.
    @Test func aRebasedPatchOKIsEncodedFromWhatWasNoted() {
        let patched = PatchedRevision(list: ListID(42), revision: 7)
        let ids = [TempRefAssignment(tempRef: 1, id: ItemID(9))]
        var expected = WireWriter()
        var encoder = FrameEncoder(compress: false)
        encoder.append(PatchOK(list: ListID(42), revision: 12, ids: ids), requestID: 61, to: &expected)
        #expect(AnswerHolder.rebased(patched, requestID: 61, .patched(revision: 12, ids: ids)) == expected.bytes)
        let refused = ChecklistError(.conflict, "the list moved on")
        #expect(AnswerHolder.rebased(patched, requestID: 61, .refused(refused))
                == AnswerHolder.unavailable(requestID: 61, refused))
        #expect(AnswerHolder.rebased(patched, requestID: 61, nil) == nil)
    }
}
