import ChecklistClient
import ChecklistTesting
import Testing

extension LiveSyncIntegration {
    /// Pushes against the real server: what one client commits, a subscribed
    /// client receives, per list in revision order, while several writers race.
    @Suite(.timeLimit(.minutes(2)))
    struct LiveSyncPushTests {
        @Test func aClientReceivesWhatAnotherCommitsInOrderPerListUnderConcurrentWriters() async throws {
            let server = try await TestServer.launch()
            defer { server.stopInBackground() }
            let setup = try await server.connect()
            let lists = [try await setup.createList(name: "Groceries"), try await setup.createList(name: "Chores")]
            let port = server.port
            // B: subscribed to both lists from revision 1.
            let sync = ChecklistSync {
                try await ChecklistConnection.connect(host: "127.0.0.1", port: port, clientName: "B")
            }
            let events = sync.subscribe(lists.map(\.id), from: Dictionary(uniqueKeysWithValues: lists.map { ($0.id, $0.revision) }))
            var iterator = events.makeAsyncIterator()
            guard case .subscribed(let start)? = await iterator.next() else { throw TestFailure("no .subscribed first") }
            #expect(start == [lists[0].id: 1, lists[1].id: 1])

            // A: three writers per list, each on its own connection, 60 batches each.
            let writers = 3
            let batches = 60
            try await withThrowingTaskGroup(of: Void.self) { group in
                for list in lists {
                    for w in 0..<writers {
                        group.addTask {
                            let a = try await ChecklistConnection.connect(host: "127.0.0.1", port: port, clientName: "A\(w)")
                            for i in 0..<batches {
                                _ = try await a.patch(list.id, ops: [.insert(tempRef: nil, position: .index(0),
                                                                             fields: ItemFields(text: "w\(w) #\(i)"))])
                            }
                            await a.close()
                        }
                    }
                }
                try await group.waitForAll()
            }
            let final = Revision(1 + writers * batches)
            var replicas = Dictionary(uniqueKeysWithValues: lists.map { ($0.id, ListReplica(revision: 1)) })
            while replicas.values.contains(where: { $0.revision < final }) {
                guard let event = await iterator.next() else { throw TestFailure("the subscription ended") }
                guard case .change(let change) = event else { Issue.record("unexpected \(event)"); continue }
                try replicas[change.list]!.apply(change)  // throws unless it is the next revision
            }
            for list in lists {
                #expect(replicas[list.id] == (try await ListReplica.read(list.id, on: setup)))
            }
            await sync.close()
            await setup.close()
        }

        /// Every list of the namespace: created, renamed and deleted lists come too.
        @Test func anAllListsSubscriberSeesListsComeAndGo() async throws {
            let server = try await TestServer.launch()
            defer { server.stopInBackground() }
            let b = try await server.connect(name: "B")
            let pushes = b.livePushes()
            let answer = try await b.subscribe([], allLists: true)
            #expect(answer.entries.isEmpty)
            let a = try await server.connect(name: "A")
            let list = try await a.createList(name: "Trips", icon: "Trips")
            _ = try await a.updateList(list.id, name: "Road trips")
            try await a.patch(list.id, ops: [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "Map"))])
            try await a.deleteList(list.id)
            var kinds: [ListChange] = []
            for await push in pushes {
                guard case .change(let change) = push else { continue }
                kinds.append(change)
                if case .listDeleted = change.kind { break }
            }
            #expect(kinds.map(\.revision) == [1, 2, 3, 4])
            #expect(kinds[0].kind == .listCreated(name: "Trips", icon: "Trips"))
            #expect(kinds[1].kind == .listUpdated(name: "Road trips", icon: "Trips"))
            #expect(kinds[2].kind == .patched([.insert(id: ItemID(1), index: 0, fields: ItemFields(text: "Map"))]))
            #expect(kinds[3].kind == .listDeleted)
            await a.close()
            await b.close()
        }

        /// `checklist watch LIST --from REV --json` prints the changes after REV,
        /// one JSON object per line.
        @Test func watchPrintsOneJSONObjectPerChange() async throws {
            let server = try await TestServer.launch()
            defer { server.stopInBackground() }
            let a = try await server.connect()
            let list = try await a.createList(name: "Groceries")
            let added = try await a.patch(list.id, ops: [.insert(tempRef: 1, position: .end, fields: ItemFields(text: "Milk"))])
            try await a.patch(list.id, ops: [.toggle(.id(added.ids[0].id))])
            await a.close()
            let cli = CLI(server: "127.0.0.1:\(server.port)")
            let output = try await BlockingWork.run { try cli.run("watch", "Groceries", "--from", "1", "--count", "2", "--json") }
            #expect(output.status == 0, "\(output.stderr)")
            let lines = output.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 2)
            #expect(lines.first == #"{"list":1,"revision":2,"kind":"patched","ops":[{"op":"INSERT","id":1,"index":0,"text":"Milk","checked":false,"due":null,"remind":false,"price":null}]}"#)
            #expect(lines.last == #"{"list":1,"revision":3,"kind":"patched","ops":[{"op":"SET_CHECKED","id":1,"checked":true}]}"#)
        }
    }
}
