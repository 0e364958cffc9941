import ChecklistModel
@testable import ChecklistServer
@testable import ChecklistStorage
import ChecklistStore
import Testing

/// `RebasedPatchAnswers`: the original's connection takes its answer by commit
/// position; a retry answered from the idempotency memory reads the same
/// answer by the patch's key, and taking one does not take the other.
@Suite struct RebasedPatchAnswersTests {
    @Test func aKeyedAnswerIsReadByItsKeyAndTakenByItsPosition() {
        let answers = RebasedPatchAnswers()
        let key = RetriedPatch(namespace: .default, key: IdempotencyKey(client: 2, sequence: 7))
        let list = ListID(4)
        answers.record(.patched(revision: 12, ids: []), position: 30, list: list, revision: 10, key: key)
        answers.record(.refused(ChecklistError(.conflict, "moved")), position: 31, list: list, revision: 11)

        // The retry shows the original's list and first revision; anything else is not it.
        #expect(answers.retried(key, list: list, revision: 10) == .patched(revision: 12, ids: []))
        #expect(answers.retried(key, list: list, revision: 11) == nil)
        #expect(answers.retried(RetriedPatch(namespace: .default, key: IdempotencyKey(client: 2, sequence: 8)),
                                list: list, revision: 10) == nil)
        // The original takes its own; the retry still reads it, and a second take finds nothing.
        #expect(answers.take(in: 1...40, list: list, revision: 10) == .patched(revision: 12, ids: []))
        #expect(answers.retried(key, list: list, revision: 10) == .patched(revision: 12, ids: []))
        #expect(answers.take(in: 1...40, list: list, revision: 10) == nil)
        // Rebased again: the key reads the newest answer.
        answers.record(.patched(revision: 15, ids: []), position: 30, list: list, revision: 10, key: key)
        #expect(answers.retried(key, list: list, revision: 10) == .patched(revision: 15, ids: []))
        // An unkeyed answer is taken by position only.
        #expect(answers.take(in: 31...31, list: list, revision: 11) == .refused(ChecklistError(.conflict, "moved")))
    }
}
