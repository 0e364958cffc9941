import ChecklistClient
import ChecklistModel

/// The server's refusal of `body`, as its wire error code and field:
/// (nil, nil) when `body` passed, (nil, the error's text) when it failed
/// some other way.
func wireRefusal(_ body: () async throws -> Void) async -> (ChecklistError.Code?, String?) {
    do {
        try await body()
        return (nil, nil)
    } catch let error as ClientError {
        return (error.wireCode, error.serverError?.field)
    } catch {
        return (nil, "\(error)")
    }
}
