import ChecklistWire
import Testing
@testable import ChecklistPersistence

/// The flusher's batch buffers: an emptied buffer keeps its storage while
/// it is small, and gives back what a bulk load grew it to.
@Suite struct LogFlusherBufferTests {
    @Test func aGrownBatchBufferIsGivenBack() {
        var small = WireWriter(capacity: 64 * 1024)
        small.writeBytes([UInt8](repeating: 7, count: 1000))
        let kept = small.bytes.capacity
        LogFlusher.empty(&small)
        #expect(small.count == 0 && small.bytes.capacity == kept)

        var grown = WireWriter(capacity: 64 * 1024)
        grown.writeBytes([UInt8](repeating: 7, count: 3 * LogFlusher.keptBufferBytes))
        #expect(grown.bytes.capacity > LogFlusher.keptBufferBytes)
        LogFlusher.empty(&grown)
        #expect(grown.count == 0 && grown.bytes.capacity <= LogFlusher.keptBufferBytes)
    }
}
