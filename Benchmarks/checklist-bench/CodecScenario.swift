import ChecklistCommandLine
import ChecklistModel
import ChecklistWire
import Foundation

/// `checklist-bench codec`: encodes and decodes PAGE frames in memory, with
/// no server: the cost of the wire codec alone.
enum CodecScenario {
    /// The scenario's options, for the parser and `--help`.
    static let spec = CommandSpec(
        name: "codec", summary: "encode/decode PAGE frames in memory",
        options: [
            .value("--rows", "N", "rows of each PAGE (default 100)"),
            BenchOptions.textBytes(40),
            .value("--iterations", "N", "frames encoded and decoded (default 20000)"),
            BenchOptions.json,
        ])

    static func run(_ args: BenchArguments) throws {
        let rowCount = try args.int("rows", default: 100, min: 1)
        let textBytes = try args.int("text-bytes", default: 40)
        let iterations = try args.int("iterations", default: 20_000, min: 1)
        let text = String(repeating: "x", count: textBytes)
        let rows = (0..<rowCount).map { i in
            Item(id: ItemID(UInt64(i + 1_000_000)), fields: ItemFields(text: text, checked: i % 3 == 0))
        }
        let page = PageMessage(list: ListID(1), revision: 42, total: 1_000_000, offset: 500_000, rows: rows)

        var writer = WireWriter(capacity: 64 * 1024)
        var encoder = FrameEncoder()
        var cpu = ToolCPU()
        let encodeStart = DispatchTime.now().uptimeNanoseconds
        for i in 0..<iterations {
            writer.reset()
            encoder.append(page, requestID: UInt32(i), to: &writer)
        }
        let encodeNanos = DispatchTime.now().uptimeNanoseconds - encodeStart
        let frame = writer.bytes

        var decodedRows = 0
        let decodeStart = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<iterations {
            decodedRows += try frame.withUnsafeBytes { raw in
                guard case let .frame(header, body, _) = FrameParser.next(in: raw, maxFrameBytes: .max) else { return 0 }
                let message = try ServerMessage.decode(header: header, body: UnsafeRawBufferPointer(rebasing: raw[body]),
                                                       maxFrameBytes: .max)
                guard case .page(let p) = message else { return 0 }
                return p.rows.count
            }
        }
        let decodeNanos = DispatchTime.now().uptimeNanoseconds - decodeStart
        cpu.stop()
        guard decodedRows == rowCount * iterations else { throw BenchFailure(description: "decode lost rows") }

        var report = BenchReport()
        report.add("scenario", "codec")
        report.add("rows", rowCount)
        report.add("frameBytes", frame.count)
        report.add("wireBytesPerRow", Double(frame.count) / Double(rowCount))
        report.add("encodeNsPerPage", Double(encodeNanos) / Double(iterations))
        report.add("decodeNsPerPage", Double(decodeNanos) / Double(iterations))
        report.add("encodeMBps", Double(frame.count * iterations) / (Double(encodeNanos) / 1e9) / 1e6)
        report.add("decodeMBps", Double(frame.count * iterations) / (Double(decodeNanos) / 1e9) / 1e6)
        report.addToolCPU(cpu, requests: iterations)
        report.print(json: args.flag("json"))
    }
}
