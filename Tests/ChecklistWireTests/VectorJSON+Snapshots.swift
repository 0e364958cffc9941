import ChecklistModel
import ChecklistWire

/// EXPORT, EXPORT_CHUNK, IMPORT and IMPORT_OK in the vectors' `fields` shape
/// (Protocol/vectors/README.md): `action`, `status` and `mode` as numbers,
/// `data` as hex, EXPORT's lists under `lists`, IMPORT_OK's pairs under
/// `pairs` (`{"from", "to"}`).
extension VectorJSON {
    // Codec → JSON ------------------------------------------------------------

    static func snapshotJSON(_ request: Request) -> (message: String, fields: JSONValue)? {
        switch request {
        case .export(let m):
            switch m.action {
            case .start(let chunkBytes, let lists):
                return ("EXPORT", .object(["action": .int(0), "chunkBytes": .number(chunkBytes),
                                           "lists": .array(lists.map { .number($0.rawValue) })]))
            case .next(let sequence):
                return ("EXPORT", .object(["action": .int(1), "sequence": .number(sequence)]))
            case .cancel:
                return ("EXPORT", .object(["action": .int(2)]))
            }
        case .import(let m):
            switch m.action {
            case .begin(let mode):
                return ("IMPORT", .object(["action": .int(0), "mode": .int(Int64(mode.rawValue))]))
            case .data(let sequence, let bytes):
                return ("IMPORT", .object(["action": .int(1), "sequence": .number(sequence), "data": .string(bytes.hex)]))
            case .end:
                return ("IMPORT", .object(["action": .int(2)]))
            case .cancel:
                return ("IMPORT", .object(["action": .int(3)]))
            }
        default:
            return nil
        }
    }

    static func snapshotJSON(_ message: ServerMessage) -> (message: String, fields: JSONValue)? {
        switch message {
        case .exportChunk(let m):
            return ("EXPORT_CHUNK", .object([
                "sequence": .number(m.sequence), "status": .int(Int64(m.status.rawValue)),
                "listCount": .number(m.listCount), "itemCount": .number(m.itemCount),
                "itemsWritten": .number(m.itemsWritten), "rawBytes": .number(m.rawBytes), "data": .string(m.data.hex),
            ]))
        case .importOK(let m):
            let pairs: [JSONValue] = m.renamed.map { .object(["from": .number($0.from.rawValue), "to": .number($0.to.rawValue)]) }
            return ("IMPORT_OK", .object([
                "status": .int(Int64(m.status.rawValue)), "sequence": .number(m.sequence), "rawBytes": .number(m.rawBytes),
                "lists": .number(m.lists), "items": .number(m.items), "deleted": .number(m.deleted), "pairs": .array(pairs),
            ]))
        default:
            return nil
        }
    }

    // JSON → codec ------------------------------------------------------------

    static func snapshotRequest(message: String, fields f: JSONValue) throws -> Request? {
        switch message {
        case "EXPORT":
            switch try f.uint("action") {
            case 0:
                let lists = try f.array("lists").map { v -> ListID in
                    guard case .int(let n) = v, n > 0 else { throw VectorMappingError("a list id: \(v)") }
                    return ListID(UInt64(n))
                }
                return .export(Export(.start(chunkBytes: try f.uint("chunkBytes"), lists: lists)))
            case 1: return .export(Export(.next(sequence: try f.uint("sequence"))))
            case 2: return .export(Export(.cancel))
            case let a: throw VectorMappingError("EXPORT action \(a)")
            }
        case "IMPORT":
            switch try f.uint("action") {
            case 0:
                guard let mode = Import.Mode(rawValue: UInt8(try f.uint("mode"))) else { throw VectorMappingError("mode") }
                return .import(Import(.begin(mode: mode)))
            case 1: return .import(Import(.data(sequence: try f.uint("sequence"), bytes: try f.hexBytes("data"))))
            case 2: return .import(Import(.end))
            case 3: return .import(Import(.cancel))
            case let a: throw VectorMappingError("IMPORT action \(a)")
            }
        default:
            return nil
        }
    }

    static func snapshotServerMessage(message: String, fields f: JSONValue) throws -> ServerMessage? {
        switch message {
        case "EXPORT_CHUNK":
            guard let status = ExportChunk.Status(rawValue: UInt8(try f.uint("status"))) else { throw VectorMappingError("status") }
            return .exportChunk(ExportChunk(sequence: try f.uint("sequence"), status: status, listCount: try f.uint("listCount"),
                                            itemCount: try f.uint("itemCount"), itemsWritten: try f.uint("itemsWritten"),
                                            rawBytes: try f.uint("rawBytes"), data: try f.hexBytes("data")))
        case "IMPORT_OK":
            guard let status = ImportOK.Status(rawValue: UInt8(try f.uint("status"))) else { throw VectorMappingError("status") }
            let pairs = try f.array("pairs").map { p in
                ImportOK.Renamed(from: ListID(try p.uint("from")), to: ListID(try p.uint("to")))
            }
            return .importOK(ImportOK(status: status, sequence: try f.uint("sequence"), rawBytes: try f.uint("rawBytes"),
                                      lists: try f.uint("lists"), items: try f.uint("items"), deleted: try f.uint("deleted"),
                                      renamed: pairs))
        default:
            return nil
        }
    }
}
