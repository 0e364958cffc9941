import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Finds the package's built executables.
public enum ProductLocator {
    /// The path of the built executable `name` (e.g. `"checklistd"`).
    ///
    /// Looks, in order, in `$CHECKLISTS_BIN_DIR`; next to the running
    /// executable (a test bundle lives in the same `.build/<config>` directory
    /// as the package's products); next to `CommandLine.arguments[0]`; then in
    /// `.build/debug` and `.build/release` under the current directory.
    public static func path(of name: String) throws -> String {
        var directories: [String] = []
        if let override = ProcessInfo.processInfo.environment["CHECKLISTS_BIN_DIR"], !override.isEmpty {
            directories.append(override)
        }
        if let executable = resolved("/proc/self/exe") {
            directories.append(parent(of: executable))
        }
        if let first = CommandLine.arguments.first, first.contains("/"), let executable = resolved(first) {
            directories.append(parent(of: executable))
        }
        let current = FileManager.default.currentDirectoryPath
        directories.append(current + "/.build/debug")
        directories.append(current + "/.build/release")

        var seen = Set<String>()
        for directory in directories where seen.insert(directory).inserted {
            let candidate = directory + "/" + name
            var info = stat()
            if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 {
                return candidate
            }
        }
        throw ChildProcessError("""
            cannot find the executable "\(name)" (build it first, e.g. `swift build --product \(name)`); \
            looked in: \(seen.sorted().joined(separator: ", "))
            """)
    }

    private static func resolved(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }

    private static func parent(of path: String) -> String {
        (path as NSString).deletingLastPathComponent
    }
}
