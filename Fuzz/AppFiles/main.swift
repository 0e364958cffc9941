import ChecklistTransfer

// libFuzzer target: the readers of the apps' files (ChecklistTransfer), the
// way `checklist import` uses them.
//
// The first input byte picks the reader:
//   even: the rest is a binary property list (`bplist00...`) read by
//         `ChecklistDocument(propertyList:)`: our binary reader, then, for
//         a keyed archive, `KeyedArchiveReader`, then the mapping to lists;
//   odd:  the rest is JSON read by `ChecklistDocument(json:)` (the same
//         scanner the streaming import uses).
// Small limits keep each run cheap. A file must be read or refused with a
// TransferError, never trap, hang or grow without bound; a binary property
// list that reads must read the same after our writer writes it again.

let limits = PropertyListLimits(maxObjects: 1 << 16, maxNodes: 1 << 18, maxDepth: 64)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAppFiles(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    if data[0] & 1 == 1 {
        _ = try? ChecklistDocument(json: bytes)
        return 0
    }
    guard bytes.starts(with: Array("bplist00".utf8)) else { return 0 }  // XML goes to Foundation, not ours to fuzz
    _ = try? ChecklistDocument(propertyList: bytes, limits: limits)
    if let value = try? BinaryPropertyListReader(bytes, limits: limits).root(), !containsNaN(value) {
        let again = try? BinaryPropertyListReader(BinaryPropertyListWriter().write(value), limits: limits).root()
        precondition(again == value, "a property list read differently after writing it again")
    }
    return 0
}

/// NaN is not equal to itself, so such trees are not compared.
func containsNaN(_ value: PropertyListValue) -> Bool {
    switch value {
    case .real(let d), .date(let d): d.isNaN
    case .array(let a): a.contains(where: containsNaN)
    case .dictionary(let d): d.values.contains(where: containsNaN)
    default: false
    }
}
