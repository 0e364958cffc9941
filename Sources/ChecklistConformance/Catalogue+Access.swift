import ChecklistModel
import ChecklistFrames
import ChecklistWire

extension Catalogue {
    /// A token the server cannot know: the target's token minus its last byte.
    static func wrongToken(_ ctx: CaseContext) -> String {
        String(ctx.target.token!.utf8.dropLast()) ?? "wrong"
    }

    static let access: [ConformanceCase] = [
        ConformanceCase("missing-token", .access, "HELLO without a token, to a server with access control",
                        .error(.notAuthenticated), requires: .token) { ctx in
            let c = try ctx.connect()
            try c.send(.hello(Hello(features: [], clientName: "no token")), id: probe)
            try c.expectError(probe, .notAuthenticated)
            try c.handshake(token: ctx.target.token)  // a later HELLO may still succeed
            try c.expectAlive()
        },
        ConformanceCase("wrong-token", .access,
                        "HELLO with a token one byte shorter than a valid one; then LIST_LISTS",
                        Outcome(error: .notAuthenticated, field: nil, connectionLevel: false,
                                answer: "the connection stays before HELLO (`HELLO_REQUIRED` next)", connection: .survives),
                        requires: .token) { ctx in
            let c = try ctx.connect()
            try c.send(.hello(Hello(features: [], clientName: "bad token", token: wrongToken(ctx))), id: probe)
            try c.expectError(probe, .notAuthenticated)
            try c.send(.listLists(ListLists()), id: probe + 1)
            try c.expectError(probe + 1, .helloRequired)
            try c.handshake(token: ctx.target.token)
            try c.expectAlive()
        },
        ConformanceCase("token-attempts-exhausted", .access, "3 HELLOs with wrong tokens on one connection",
                        Outcome(error: .notAuthenticated, field: nil, connectionLevel: false,
                                answer: "each time; closed after the 3rd", connection: .closed),
                        requires: .token) { ctx in
            let c = try ctx.connect()
            for attempt in UInt32(1)...3 {
                try c.send(.hello(Hello(features: [], clientName: "guess \(attempt)", token: "guess-\(attempt)")), id: probe + attempt)
                try c.expectError(probe + attempt, .notAuthenticated)
            }
            try ctx.expectConnectionState(c)
        },
        ConformanceCase("token-too-long", .access, "HELLO with a token of 8193 bytes",
                        .error(.notAuthenticated), requires: .token) { ctx in
            let c = try ctx.connect()
            try c.send(.hello(Hello(features: [], clientName: "long", token: String(repeating: "t", count: Hello.maxTokenBytes + 1))),
                       id: probe)
            try c.expectError(probe, .notAuthenticated)
            try c.handshake(token: ctx.target.token)
            try c.expectAlive()
        },
        ConformanceCase("other-namespace", .access,
                        "with a second namespace's token: GET_PAGE, UPDATE_LIST, PATCH and DELETE_LIST of a list of the first",
                        Outcome(error: .notFound, field: nil, connectionLevel: false,
                                answer: "each, like a missing list; LIST_LISTS does not show it", connection: .survives),
                        requires: .twoNamespaces) { ctx in
            let c = try ctx.connect()
            try c.handshake(token: ctx.target.secondToken)
            let list = ctx.fixture.list
            let requests: [Request] = [
                .getPage(GetPage(list: list, limit: 10)),
                .updateList(UpdateList(list: list, name: "stolen")),
                .patch(Patch(list: list, ops: [.delete(.id(ctx.fixture.items[0]))])),
                .deleteList(DeleteList(list: list)),
            ]
            for (i, request) in requests.enumerated() {
                try c.send(request, id: probe + UInt32(i))
                try c.expectError(probe + UInt32(i), .notFound)
            }
            try c.send(.listLists(ListLists()), id: probe + 10)
            let ids = try c.receive(probe + 10, "LISTS") { message -> [ListID]? in
                if case .lists(let l) = message { return l.lists.map(\.id) }
                return nil
            }
            guard !ids.contains(list) else { throw CaseFailure("LIST_LISTS of the second namespace shows list \(list)") }
            try ctx.expectConnectionState(c)
        },
        ConformanceCase("other-namespace-sync", .access,
                        "with a second namespace's token: SUBSCRIBE, CHANGES_SINCE and EXPORT of a list of the first, "
                            + "and IMPORT (MERGE) of a snapshot holding a list with its id",
                        .answer("`SUBSCRIBED` with status `NOT_FOUND`; `NOT_FOUND`; `NOT_FOUND`; the import creates "
                                + "a list with another id in the second namespace; the first one's list is untouched"),
                        requires: .twoNamespaces) { ctx in
            let c = try ctx.connect()
            try c.handshake(token: ctx.target.secondToken)
            let list = ctx.fixture.list
            let subscribed = try call(c, .subscribe(Subscribe(entries: [.init(list: list, revision: 1)])), 10, "SUBSCRIBED") { m -> Subscribed? in
                if case .subscribed(let s) = m { return s }
                return nil
            }
            try require(subscribed.entries.map(\.status) == [.notFound], "SUBSCRIBED answered \(subscribed.entries)")
            try c.send(.changesSince(ChangesSince(list: list, revision: 1, limit: 10)), id: 11)
            try c.expectError(11, .notFound)
            try c.send(.export(Export(.start(chunkBytes: 0, lists: [list]))), id: 12)
            try c.expectError(12, .notFound)
            let snapshot = SnapshotBytes([SnapshotBytes.List(id: list.rawValue, name: "Not yours", items: [(1, "x", false)])])
            _ = try importStep(c, .begin(mode: .merge), id: 13)
            _ = try importStep(c, .data(sequence: 1, bytes: snapshot.file), id: 14)
            let applied = try importStep(c, .end, id: 15)
            guard applied.status == .applied, let moved = applied.renamed.first(where: { $0.from == list }), moved.to != list else {
                throw CaseFailure("the import should give the list another id: \(applied)")
            }
            try deleted(c, moved.to, id: 16)
            try ctx.expectConnectionState(c)
        },
    ]
}
