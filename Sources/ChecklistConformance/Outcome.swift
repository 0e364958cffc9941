import ChecklistModel

/// What a server must do with one input of the catalogue: the answer (an
/// `ERROR` with its code and field, or a normal answer described in words)
/// and what becomes of the connection. Protocol/SPEC.md section 8 lists
/// every case's outcome; `CatalogueTable` renders it from these values.
public struct Outcome: Sendable, Hashable {
    /// What becomes of the connection that sent the input.
    public enum Connection: String, Sendable, Hashable {
        /// Stays open and answers the next request.
        case survives = "stays open"
        /// The server closes it (after sending the answer, if any).
        case closed = "closed"
        /// The client itself resets or abandons it; the server just carries on.
        case abandoned = "client resets it"
    }

    /// The error code of the answer, or nil when the answer is not an error.
    public var error: ChecklistError.Code?
    /// The field the error names, if it names one.
    public var field: String?
    /// True when the error is sent with request id 0 (framing is lost).
    public var connectionLevel: Bool
    /// The answer in words when it is not an error (e.g. "PAGE, no rows").
    public var answer: String?
    public var connection: Connection

    /// An `ERROR` answering the request; the connection stays usable.
    public static func error(_ code: ChecklistError.Code, _ field: String? = nil) -> Outcome {
        Outcome(error: code, field: field, connectionLevel: false, answer: nil, connection: .survives)
    }

    /// An `ERROR` with request id 0, then the server closes the connection.
    public static func closing(_ code: ChecklistError.Code) -> Outcome {
        Outcome(error: code, field: nil, connectionLevel: true, answer: nil, connection: .closed)
    }

    /// A normal answer (or none), described in words.
    public static func answer(_ text: String, connection: Connection = .survives) -> Outcome {
        Outcome(error: nil, field: nil, connectionLevel: false, answer: text, connection: connection)
    }

    /// The answer column of the SPEC table, e.g. "`BAD_FIELD` `name`".
    public var answerText: String {
        guard let error else { return answer ?? "none" }
        var text = "`\(error.name)`"
        if let field { text += " `\(field)`" }
        if connectionLevel { text += ", request id 0" }
        if let answer { text += "; " + answer }
        return text
    }
}
