// The client's API is written in the model's and the codec's types
// (ListSummary, ItemFields, PatchOperation, Request, ServerMessage, ...):
// re-export them so that `import ChecklistClient` is all a user needs.
// `connect(..., tls:)` takes ChecklistTLS's TLSClientConfiguration.
@_exported import ChecklistModel
@_exported import ChecklistTLS
@_exported import ChecklistWire
