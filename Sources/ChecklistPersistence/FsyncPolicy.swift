/// When the write-ahead log makes appended records durable (`--fsync`).
public enum FsyncPolicy: String, Hashable, Sendable, CaseIterable {
    /// Group commit: a record is written and fsynced before `durableLSN`
    /// passes it and `onDurable` reports it; records appended while an fsync
    /// runs share the next one. Nothing acknowledged after `onDurable` is
    /// lost by a crash of the process or of the machine.
    case always
    /// Records are written and fsynced at most about one second after they
    /// are appended. A crash of the process or the machine may lose the
    /// last second of acknowledged changes.
    case everysec
    /// Records are handed to the kernel with write(2) promptly; fsync is
    /// left to the operating system (and done on segment rotation and
    /// close). A process crash loses (almost) nothing; a machine crash may
    /// lose whatever the kernel had not yet written.
    case no
}
