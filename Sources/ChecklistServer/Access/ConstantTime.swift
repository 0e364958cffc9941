/// Comparisons of secrets whose running time does not depend on their content.
enum ConstantTime {
    /// Whether `presented` equals `secret`. Every byte of `presented` is
    /// compared (against `secret` repeated), differences are OR-ed together
    /// with no early exit, and a length mismatch is folded into the same
    /// accumulator: the time depends only on `presented.count`, which the
    /// caller already knows, never on where the first difference lies or on
    /// the secret's length.
    static func equals(_ presented: [UInt8], _ secret: [UInt8]) -> Bool {
        guard !secret.isEmpty else { return presented.isEmpty }
        var difference = UInt64(truncatingIfNeeded: presented.count ^ secret.count)
        var j = 0
        for byte in presented {
            difference |= UInt64(byte ^ secret[j])
            j += 1
            if j == secret.count { j = 0 }
        }
        return difference == 0
    }
}
