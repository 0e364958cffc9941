// The tests and tools reach the blocking frame client (FrameSocket)
// through this module, as before it moved to ChecklistFrames.
@_exported import ChecklistFrames
