import ChecklistClient
import ChecklistModel
import Testing

/// Expects `body` to be refused by the server with `code`; records an issue
/// naming `what` when it is answered instead (with what it returned), or
/// fails with another error.
func expectRefused<T>(_ what: String, with code: ChecklistError.Code = .unavailable,
                      sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T) async throws {
    do {
        let answer = try await body()
        Issue.record("\(what) was answered: \(answer)", sourceLocation: sourceLocation)
    } catch let error as ClientError {
        #expect(error.serverError?.code == code, "\(what): \(error)", sourceLocation: sourceLocation)
    }
}
