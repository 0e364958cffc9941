// A decoder of a snapshot streamed in chunks whose gzip members are
// inflated on several threads (`ParallelStreamInflater`).
extension SnapshotDecoder {
    /// A decoder for the snapshot called `name` in errors, fed through the
    /// returned inflater (`ParallelStreamInflater.feed`, `endInput`; the
    /// decoder's own `feed` takes nothing), whose members `workers` inflate.
    /// It decodes exactly what `init(name:limits:)` decodes from the same
    /// bytes, with the same errors, found in the same chunk.
    public static func streamed(name: String, limits: SnapshotLimits = .default,
                                workers: InflateWorkers?) -> (decoder: SnapshotDecoder, input: ParallelStreamInflater) {
        let input = ParallelStreamInflater(workers: workers)
        return (SnapshotDecoder(name: name, limits: limits, source: input), input)
    }
}
