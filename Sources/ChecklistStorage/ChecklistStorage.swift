// ChecklistStorage: where a checklistd keeps its data, behind one seam.
//
// The storage implementations of the server: the local data directory
// (snapshots and a write-ahead log) and PostgreSQL (one or several nodes
// sharing a database). The module knows no sockets, no event loop and no
// protocol session: the server (ChecklistServer) drives it through
// `ServerStorage`, hands it the store's commits, and gives it live sync as a
// `LiveSyncFeed`. Threads here are the storage's own (log flusher,
// compactor, committer, follower, loaders, upkeep); none of their work
// blocks an event loop.
//
// Glossary
//
// The seam
//   ServerStorage         the protocol every storage implements: append commits, say where a commit
//                         position stands, wake waiters, report status, close.
//   StorageOpener         how a service opens its storage: makes the store, loads what is stored into it,
//                         and wires commits to the storage and then to live sync (`openStore`).
//   LiveSyncFeed          what the storage sees of live sync: replayed and committed changes go there.
//   CommitFanout          the store's one commit callback, handing each commit to several consumers in order.
//   DurabilityStatus      what STATS and /metrics report about the log and the last snapshot.
//
// Durability: answers that wait for their commits
//   CommitState           where one commit position stands: pending, durable or failed.
//   CommitStates          the durable and failed positions of a storage, and the waiters (connections
//                         holding answers) woken when theirs settles. (Was `DurabilityWaiters`.)
//   RebasedAnswer         the answer a PATCH gets after its commit lost to another node's and was applied
//                         again on top: a new PATCH_OK or an ERROR.
//   RebasedPatchAnswers   those answers by commit position (and by idempotency key, for a retry), until
//                         the connection holding the original answer takes its own. (Was `RebasedAnswers`.)
//   RetriedPatch          a keyed PATCH: its namespace and idempotency key.
//   UncommittedKeys       the keys of keyed patches whose commits are not durable yet, with their positions.
//   UncommittedRead       a PAGE or LISTS that showed changes still in flight: it waits for them and is
//                         checked against what was committed.
//   (In ChecklistServer: `AnswerHolder` holds one connection's answers until their commits are durable
//   and sends, replaces or releases them; `HeldAnswerBytes` keeps the held bytes in order, and each
//   `HeldAnswer` marks one waiting answer with what replacing it needs. Were `DurabilityBarrier`,
//   `HeldAnswers` and `HeldAnswers.Barrier`.)
//
// The data directory
//   DataDirectoryStorage  snapshots plus a write-ahead log in one directory; `Compactor` writes a snapshot
//                         in the background after enough logged changes; `StoreRestoreSink` loads a
//                         snapshot into a store; `SnapshotExport` writes a store cut as a snapshot.
//
// PostgreSQL
//   PostgresStorage       a node over a database: owns the committer, follower, cache and upkeep.
//   PostgresSettings      its options (statement timeout, cache, checkpoints, housekeeping).
//   PostgresCommitter     the one thread that commits: queued commits (`QueuedCommit`) are taken as one
//                         batch (`PostgresBatch`) and committed as one transaction.
//   CrossNodeRebase       the committer's step inside that transaction when another node committed to a
//                         list of the batch: catch the list up and apply the node's patches again on top,
//                         recording their new answers. (Was `BatchRebase`.)
//   CommitNotice          the payload of the commit notification nodes send each other.
//   PostgresFollower      the thread that follows other nodes' commits (LISTEN), catching lists up.
//   ListCatchUp           brings one cached list up to what the database holds (follow or reload).
//   CommittedView         per list, the revision known committed and published to live sync.
//   ListCache             the node's memory as a cache of lists: pins, evictions, the loads a request
//                         waits for (`ListLoadRequest`), carried out by `PostgresListLoaders`.
//   PostgresUpkeep        the background thread writing checkpoints and trimming old changes and keys.
//
// Memory
//   FreeMemory            the C heap's thresholds, and giving its free memory back after loads, imports
//                         and bulk fills (counted at commit, done on the storage's own threads).
