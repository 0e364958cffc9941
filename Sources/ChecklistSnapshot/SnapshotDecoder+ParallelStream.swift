// A decoder of a snapshot streamed in chunks whose gzip members are
// inflated on several threads (`ParallelStreamInflater`).
extension SnapshotDecoder {
    /// A decoder for the snapshot called `name` in errors, fed through the
    /// returned inflater (`ParallelStreamInflater.feed`, `endInput`; the
    /// decoder's own `feed` takes nothing), whose members `workers` inflate.
    /// It decodes exactly what `init(name:limits:)` decodes from the same
    /// bytes, with the same errors, found in the same chunk.
    ///
    /// With `rowBuilding` (a sink's, `SnapshotRestoreSink.rowBuilding`)
    /// the workers also decode the records of what they inflated and build
    /// the rows, which `restore(into:)` then hands to the sink's
    /// `restoreRows`.
    public static func streamed(name: String, limits: SnapshotLimits = .default, workers: InflateWorkers?,
                                rowBuilding: SnapshotRowBuilding? = nil) -> (decoder: SnapshotDecoder, input: ParallelStreamInflater) {
        let input = ParallelStreamInflater(workers: workers, maxLookBack: windowBytes(limits),
                                           decoder: rowBuilding?.decoder(limits: limits))
        let decoder = SnapshotDecoder(name: name, limits: limits, source: input)
        // The inflater does not keep the decoder: the decoder holds it.
        input.recordBoundary = { [weak decoder] in decoder?.bytesToRecordBoundary }
        return (decoder, input)
    }
}
