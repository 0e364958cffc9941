// The client's API is written in the model's and the codec's types
// (ListSummary, ItemFields, PatchOperation, Request, ServerMessage, ...):
// re-export them so that `import ChecklistClient` is all a user needs.
@_exported import ChecklistModel
@_exported import ChecklistWire
