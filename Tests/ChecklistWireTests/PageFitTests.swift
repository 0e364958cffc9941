import ChecklistModel
import ChecklistWire
import Testing

/// How many rows of a PAGE fit in one frame, by the encoding's worst case.
@Suite(.timeLimit(.minutes(1))) struct PageFitTests {
    /// Encodes a PAGE of `texts` the way the server does, row by row into
    /// memory reserved by the worst case.
    static func encodedLength(_ header: PageHeader, _ texts: [String], maxID: Bool) -> Int {
        var w = WireWriter()
        var encoder = FrameEncoder()
        encoder.append(type: .page, requestID: 1, to: &w) { w in
            header.encode(into: &w)
            let bound = texts.reduce(0) { $0 + PageMessage.maxRowBytesBesidesText + $1.utf8.count }
            w.writeReserved(atMost: bound) { c in
                for (i, text) in texts.enumerated() {
                    var text = text
                    text.withUTF8 { bytes in
                        PageMessage.writeRow(id: ItemID(maxID ? .max : UInt64(i + 1)), checked: true, remind: true,
                                             due: .min, price: .min, text: UnsafeRawBufferPointer(bytes), into: &c)
                    }
                }
            }
        }
        return w.count - 4  // the frame's `length`
    }

    @Test func theRowsAdmittedFitEvenAtTheWorstCase() {
        let maxFrame: UInt32 = 1000
        let texts = (0..<40).map { String(repeating: "x", count: $0 * 3) }
        var fitting = PageMessage.RowsFitting(maxFrameBytes: maxFrame)
        #expect(!fitting.allFit(rows: texts.count, maxTextBytes: 117))
        for text in texts { fitting.admit(textBytes: text.utf8.count) }
        #expect(fitting.count > 0 && fitting.count < texts.count)
        let header = PageHeader(list: ListID(.max), revision: .max, total: .max, offset: .max, count: fitting.count)
        let admitted = Array(texts.prefix(fitting.count))
        #expect(Self.encodedLength(header, admitted, maxID: true) <= Int(maxFrame))
    }

    @Test func smallPagesNeedNoMeasuring() {
        let fitting = PageMessage.RowsFitting(maxFrameBytes: 4 << 20)
        #expect(fitting.allFit(rows: 1000, maxTextBytes: 4096 - 64))
        #expect(!fitting.allFit(rows: 1000, maxTextBytes: 8192))
        #expect(fitting.maxBodyBytes == (4 << 20) - 6)
    }

    @Test func aRowIsItsIDThenItsFields() {
        var w = WireWriter()
        let text: [UInt8] = Array("hi".utf8)
        text.withUnsafeBytes { bytes in
            w.writeReserved(atMost: PageMessage.maxRowBytesBesidesText + bytes.count) { c in
                PageMessage.writeRow(id: ItemID(300), checked: true, remind: false, due: nil, price: -1, text: bytes, into: &c)
            }
        }
        // id 300 as a varint, flags checked|hasPrice, "hi", price -1 as zigzag.
        #expect(w.bytes == [0xAC, 0x02, 0x09, 0x02, 0x68, 0x69, 0x01])
    }
}
