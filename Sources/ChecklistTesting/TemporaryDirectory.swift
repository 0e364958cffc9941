import Foundation

/// A fresh directory under the system temporary directory (`$TMPDIR` or
/// `/tmp`), removed with everything in it by `remove()` or on deinit.
public final class TemporaryDirectory: Sendable {
    /// Absolute path of the directory.
    public let path: String

    /// Creates `<tmp>/<prefix>.XXXXXX` with `mkdtemp` (mode 0700).
    public init(prefix: String = "checklists") throws {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
        let created: String? = template.withUnsafeMutableBufferPointer { buffer in
            guard let result = mkdtemp(buffer.baseAddress!) else { return nil }
            return String(cString: result)
        }
        guard let created else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: "\(base)/\(prefix).XXXXXX",
                                                           NSLocalizedDescriptionKey: "mkdtemp failed: errno \(errno)"])
        }
        self.path = created
    }

    /// `path` + "/" + `name`.
    public func appending(_ name: String) -> String { path + "/" + name }

    /// Removes the directory and its contents; harmless if already gone.
    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    deinit { remove() }
}
