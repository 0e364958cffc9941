extension MessageType {
    /// The name Protocol/SPEC.md section 5 gives this type (`GET_PAGE`,
    /// `PATCH_OK`, ...; both 0x91 and 0x92 are `LIST`), or `0x7F` style hex
    /// for a type it does not define. For logs and metrics labels.
    public var name: String {
        switch self {
        case .hello: return "HELLO"
        case .ping: return "PING"
        case .auth: return "AUTH"
        case .listLists: return "LIST_LISTS"
        case .createList: return "CREATE_LIST"
        case .updateList: return "UPDATE_LIST"
        case .deleteList: return "DELETE_LIST"
        case .getPage: return "GET_PAGE"
        case .patch: return "PATCH"
        case .subscribe: return "SUBSCRIBE"
        case .unsubscribe: return "UNSUBSCRIBE"
        case .changesSince: return "CHANGES_SINCE"
        case .export: return "EXPORT"
        case .import: return "IMPORT"
        case .stats: return "STATS"
        case .helloOK: return "HELLO_OK"
        case .pong: return "PONG"
        case .lists: return "LISTS"
        case .listCreated, .listUpdated: return "LIST"
        case .listDeleted: return "LIST_DELETED"
        case .page: return "PAGE"
        case .patchOK: return "PATCH_OK"
        case .subscribed: return "SUBSCRIBED"
        case .unsubscribed: return "UNSUBSCRIBED"
        case .changes: return "CHANGES"
        case .exportChunk: return "EXPORT_CHUNK"
        case .importOK: return "IMPORT_OK"
        case .statsReport: return "STATS_REPORT"
        case .changePush: return "CHANGE"
        case .subscriptionDropped: return "SUBSCRIPTION_DROPPED"
        case .error: return "ERROR"
        default: return description
        }
    }
}
