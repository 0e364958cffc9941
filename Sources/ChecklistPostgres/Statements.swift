/// The statements the store runs on its hot paths, prepared once per
/// connection. Batches pass one array per column and unnest them, so a
/// batch of any size is one statement (one round trip) per table.
enum Statements {
    // MARK: Lists

    static let nextListID = PostgresStatement(name: "ckl_next_list_id", sql:
        "SELECT value FROM checklist_settings WHERE name = 'next_list_id'")

    static let reserveListIDs = PostgresStatement(name: "ckl_reserve_list_ids", sql:
        "UPDATE checklist_settings SET value = value + $1 WHERE name = 'next_list_id' RETURNING value")

    static let raiseNextListID = PostgresStatement(name: "ckl_raise_next_list_id", sql:
        "UPDATE checklist_settings SET value = $1 WHERE name = 'next_list_id' AND value < $1")

    /// Columns 0-10 as `PostgresStore.record` reads them.
    static let listsInNamespace = PostgresStatement(name: "ckl_lists_in_namespace", sql: """
        SELECT id, name, icon, name_bytes, icon_bytes, item_count, unchecked_count, revision, next_item_id,
               checkpoint_revision, namespace
        FROM lists WHERE namespace = $1 ORDER BY id
        """)

    static let listByID = PostgresStatement(name: "ckl_list_by_id", sql: """
        SELECT id, name, icon, name_bytes, icon_bytes, item_count, unchecked_count, revision, next_item_id,
               checkpoint_revision, namespace
        FROM lists WHERE id = $1
        """)

    /// Every list's row (columns as `listByID`), for a node that loads
    /// summaries at start and rows on first use.
    static let allLists = PostgresStatement(name: "ckl_all_lists", sql: """
        SELECT id, name, icon, name_bytes, icon_bytes, item_count, unchecked_count, revision, next_item_id,
               checkpoint_revision, namespace
        FROM lists ORDER BY id
        """)

    static let allListIDs = PostgresStatement(name: "ckl_all_list_ids", sql: "SELECT id FROM lists ORDER BY id")

    static let addNamespaces = PostgresStatement(name: "ckl_add_namespaces", sql:
        "INSERT INTO namespaces (name) SELECT DISTINCT unnest($1::text[]) ON CONFLICT DO NOTHING")

    // MARK: Commits

    /// The SQLSTATE of a failed revision check (`updateLists`,
    /// `insertLists`, `deleteLists`): 22012, division by zero. Plain SQL
    /// cannot raise an error of its own, and a check that fails must be an
    /// error, so that the rest of the commit's pipeline, its COMMIT
    /// included, is not run. No other statement of a commit divides.
    static let revisionCheckFailed = "22012"

    /// Lists the batch changes: each row only if its revision is still the
    /// commit's base (the revision check). One row when every row passed;
    /// fails with `revisionCheckFailed` otherwise (the division by zero is
    /// the check: `count(*)` is not a constant, so the planner cannot fold it).
    static let updateLists = PostgresStatement(name: "ckl_update_lists_checked", sql: """
        WITH passed AS (
            UPDATE lists AS l SET name = v.name, icon = v.icon, name_bytes = v.name_bytes, icon_bytes = v.icon_bytes,
                   item_count = v.item_count, unchecked_count = v.unchecked_count, revision = v.revision,
                   next_item_id = v.next_item_id, change_bytes = l.change_bytes + v.change_bytes,
                   row_bytes = coalesce(v.row_bytes, l.row_bytes), updated_at = now()
            FROM unnest($1::int8[], $2::int8[], $3::text[], $4::text[], $5::text[], $6::bytea[], $7::bytea[],
                        $8::int8[], $9::int8[], $10::int8[], $11::int8[], $12::int8[], $13::int8[])
                 AS v(id, base, namespace, name, icon, name_bytes, icon_bytes, item_count, unchecked_count, revision,
                      next_item_id, change_bytes, row_bytes)
            WHERE l.id = v.id AND l.revision = v.base AND l.namespace = v.namespace
            RETURNING l.id)
        SELECT 1 / (count(*) = cardinality($1::int8[]))::int FROM passed
        """)

    /// Lists the batch creates; an id already taken fails the statement
    /// with `revisionCheckFailed`, as `updateLists` does.
    static let insertLists = PostgresStatement(name: "ckl_insert_lists_checked", sql: """
        WITH passed AS (
            INSERT INTO lists (id, namespace, name, icon, name_bytes, icon_bytes, item_count, unchecked_count,
                               revision, next_item_id, change_bytes, row_bytes)
            SELECT * FROM unnest($1::int8[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::bytea[],
                                 $7::int8[], $8::int8[], $9::int8[], $10::int8[], $11::int8[], $12::int8[])
            ON CONFLICT (id) DO NOTHING
            RETURNING id)
        SELECT 1 / (count(*) = cardinality($1::int8[]))::int FROM passed
        """)

    /// Lists the batch deletes, with the same revision check as `updateLists`.
    static let deleteLists = PostgresStatement(name: "ckl_delete_lists_checked", sql: """
        WITH passed AS (
            DELETE FROM lists AS l USING unnest($1::int8[], $2::int8[], $3::text[]) AS v(id, base, namespace)
            WHERE l.id = v.id AND l.revision = v.base AND l.namespace = v.namespace
            RETURNING l.id)
        SELECT 1 / (count(*) = cardinality($1::int8[]))::int FROM passed
        """)

    static let dropHistory = PostgresStatement(name: "ckl_drop_history", sql:
        "DELETE FROM changes WHERE list_id = ANY($1::int8[])")

    static let revisions = PostgresStatement(name: "ckl_revisions", sql:
        "SELECT id, revision FROM lists WHERE id = ANY($1::int8[])")

    /// Locks the rows of the lists a commit changes, in id order (so two
    /// nodes locking overlapping sets never deadlock), and returns their
    /// revisions: the other nodes' commits of those lists wait from here
    /// until this transaction ends.
    static let lockLists = PostgresStatement(name: "ckl_lock_lists", sql:
        "SELECT id, revision FROM lists WHERE id = ANY($1::int8[]) ORDER BY id FOR UPDATE")

    /// The stored changes of several lists, each after its own revision
    /// and at most `$3` of them: list id, then the change's body; by list,
    /// then revision. Each list's changes are read through the primary key
    /// by a LATERAL subquery that its `LIMIT` keeps from being flattened: as
    /// a plain join the planner hashes the whole `changes` table (a
    /// sequential scan that grows with the history, inside the committer's
    /// lock window).
    static let changesAfterEach = PostgresStatement(name: "ckl_changes_after_each", sql: """
        SELECT k.list_id, c.body FROM unnest($1::int8[], $2::int8[]) AS k(list_id, after)
        CROSS JOIN LATERAL (SELECT c.revision, c.body FROM changes c
                            WHERE c.list_id = k.list_id AND c.revision > k.after ORDER BY c.revision LIMIT $3) c
        ORDER BY k.list_id, c.revision
        """)

    static let insertChanges = PostgresStatement(name: "ckl_insert_changes", sql: """
        INSERT INTO changes (list_id, revision, namespace, kind, body)
        SELECT v.list_id, v.revision, v.namespace, v.kind::smallint, v.body
        FROM unnest($1::int8[], $2::int8[], $3::text[], $4::int8[], $5::bytea[]) AS v(list_id, revision, namespace, kind, body)
        """)

    // MARK: Idempotency

    /// Remembers the batch's answers and marks their clients used, in one
    /// statement.
    static let insertAnswers = PostgresStatement(name: "ckl_insert_answers", sql: """
        WITH answers AS (
            INSERT INTO idempotency_answers (namespace, client, sequence, list_id, revision, inserted)
            SELECT * FROM unnest($1::text[], $2::int8[], $3::int8[], $4::int8[], $5::int8[], $6::bytea[])
            RETURNING namespace, client)
        INSERT INTO idempotency_clients (namespace, client)
        SELECT DISTINCT namespace, client FROM answers
        ON CONFLICT (namespace, client) DO UPDATE SET last_used = now()
        """)

    static let answer = PostgresStatement(name: "ckl_answer", sql: """
        SELECT c.floor, a.list_id, a.revision, a.inserted
        FROM idempotency_clients c
        LEFT JOIN idempotency_answers a ON a.namespace = c.namespace AND a.client = c.client AND a.sequence = $3
        WHERE c.namespace = $1 AND c.client = $2
        """)

    static let memory = PostgresStatement(name: "ckl_memory", sql: """
        SELECT c.namespace, c.client, c.floor, a.sequence, a.list_id, a.revision, a.inserted
        FROM idempotency_clients c
        LEFT JOIN idempotency_answers a ON a.namespace = c.namespace AND a.client = c.client
        ORDER BY c.last_used, c.namespace, c.client, a.sequence
        """)

    /// Forgets all but the newest `$1` answers of each client and raises
    /// each client's floor to the highest sequence it forgot.
    static let forgetAnswers = PostgresStatement(name: "ckl_forget_answers", sql: """
        WITH ranked AS (
            SELECT namespace, client, sequence,
                   row_number() OVER (PARTITION BY namespace, client ORDER BY sequence DESC) AS newer
            FROM idempotency_answers),
        gone AS (
            DELETE FROM idempotency_answers a USING ranked r
            WHERE a.namespace = r.namespace AND a.client = r.client AND a.sequence = r.sequence AND r.newer > $1
            RETURNING a.namespace, a.client, a.sequence),
        floors AS (
            UPDATE idempotency_clients c SET floor = greatest(c.floor, g.top)
            FROM (SELECT namespace, client, max(sequence) AS top FROM gone GROUP BY namespace, client) g
            WHERE c.namespace = g.namespace AND c.client = g.client
            RETURNING 1)
        SELECT count(*) FROM gone
        """)

    // MARK: Loads and checkpoints

    static let checkpointParts = PostgresStatement(name: "ckl_checkpoint_parts", sql:
        "SELECT revision, data FROM list_checkpoints WHERE list_id = $1 ORDER BY part")

    static let changesAfter = PostgresStatement(name: "ckl_changes_after", sql:
        "SELECT revision, body FROM changes WHERE list_id = $1 AND revision > $2 ORDER BY revision LIMIT $3")

    static let lockList = PostgresStatement(name: "ckl_lock_list", sql:
        "SELECT revision, checkpoint_revision FROM lists WHERE id = $1 FOR UPDATE")

    static let dropCheckpoint = PostgresStatement(name: "ckl_drop_checkpoint", sql:
        "DELETE FROM list_checkpoints WHERE list_id = $1")

    static let insertCheckpoint = PostgresStatement(name: "ckl_insert_checkpoint", sql: """
        INSERT INTO list_checkpoints (list_id, part, revision, data)
        SELECT $1, p.part::int, $2, p.data FROM unnest($3::int8[], $4::bytea[]) AS p(part, data)
        """)

    /// Moves a list's checkpoint to `$2`: the bytes of the changes it now
    /// covers leave `change_bytes` (never below 0: a node of schema 1 that
    /// still ran beside this one added changes without counting them).
    static let setCheckpointRevision = PostgresStatement(name: "ckl_set_checkpoint_revision", sql: """
        UPDATE lists AS l SET checkpoint_revision = $2,
               change_bytes = greatest(0, l.change_bytes - (SELECT coalesce(sum(octet_length(c.body)), 0) FROM changes c
                                                            WHERE c.list_id = l.id AND c.revision > l.checkpoint_revision
                                                              AND c.revision <= $2))
        WHERE l.id = $1
        """)

    /// The lists due a checkpoint: reads `lists` alone. (Summing the bodies
    /// of every list's changes here instead cost 27 ms a call with 50 busy
    /// lists, a quarter of PostgreSQL's CPU under write load: `change_bytes`
    /// keeps that sum, moved by the commits and the checkpoints.)
    static let compactionCandidates = PostgresStatement(name: "ckl_compaction_candidates", sql: """
        SELECT l.id FROM lists l
        WHERE l.revision - l.checkpoint_revision >= $1
           OR (l.revision > l.checkpoint_revision AND l.change_bytes >= $3)
        ORDER BY l.revision - l.checkpoint_revision DESC, l.id LIMIT $2
        """)

    /// The session lock that claims a list's next checkpoint for one
    /// node's upkeep: `pg_try_advisory_lock(key, low 32 bits of the list
    /// id)`, the key being "cklc". Two lists sharing their low bits only
    /// make one of them wait for the next pass.
    static let claimCheckpoint = PostgresStatement(name: "ckl_claim_checkpoint", sql:
        "SELECT pg_try_advisory_lock(1667984483, $1::int4)")
    static let releaseCheckpoint = PostgresStatement(name: "ckl_release_checkpoint", sql:
        "SELECT pg_advisory_unlock(1667984483, $1::int4)")

    /// Whether a list is still due a checkpoint (`compactionCandidates`'s test).
    static let checkpointDue = PostgresStatement(name: "ckl_checkpoint_due", sql: """
        SELECT count(*) FROM lists l
        WHERE l.id = $1 AND (l.revision - l.checkpoint_revision >= $2
                             OR (l.revision > l.checkpoint_revision AND l.change_bytes >= $3))
        """)

    // MARK: Change feed

    /// The list's revision and the revision its retained history starts
    /// at: its newest import (kind 5), which started the history over
    /// (Protocol/SPEC.md section 6.13: the changes before it stay stored
    /// until trimmed but are never answered), else its oldest retained change.
    static let feedBounds = PostgresStatement(name: "ckl_feed_bounds", sql: """
        SELECT l.revision,
               coalesce((SELECT max(c.revision) FROM changes c WHERE c.list_id = l.id AND c.kind = 5),
                        (SELECT min(c.revision) FROM changes c WHERE c.list_id = l.id))
        FROM lists l WHERE l.id = $1 AND l.namespace = $2
        """)

    /// Drops changes older than the last `$1` of each list, but never one
    /// after the list's checkpoint (a load needs those).
    static let trimChanges = PostgresStatement(name: "ckl_trim_changes", sql: """
        DELETE FROM changes c USING lists l
        WHERE c.list_id = l.id AND c.revision <= least(l.checkpoint_revision, l.revision - $1)
        """)

    /// Drops the deletion markers of lists deleted more than `$1` seconds ago.
    static let forgetDeletions = PostgresStatement(name: "ckl_forget_deletions", sql: """
        DELETE FROM changes c
        WHERE NOT EXISTS (SELECT 1 FROM lists l WHERE l.id = c.list_id)
          AND c.committed_at < now() - make_interval(secs => $1)
        """)

    // MARK: Imports

    static let upsertList = PostgresStatement(name: "ckl_upsert_list", sql: """
        INSERT INTO lists (id, namespace, name, icon, name_bytes, icon_bytes, item_count, unchecked_count,
                           revision, next_item_id, checkpoint_revision)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $9)
        ON CONFLICT (id) DO UPDATE SET namespace = EXCLUDED.namespace, name = EXCLUDED.name, icon = EXCLUDED.icon,
            name_bytes = EXCLUDED.name_bytes, icon_bytes = EXCLUDED.icon_bytes, item_count = EXCLUDED.item_count,
            unchecked_count = EXCLUDED.unchecked_count, revision = EXCLUDED.revision,
            next_item_id = EXCLUDED.next_item_id, checkpoint_revision = EXCLUDED.revision, change_bytes = 0,
            row_bytes = NULL, updated_at = now()
        """)

    // MARK: Several nodes

    /// A node announces what it committed: run outside any writing
    /// transaction (no xid, no WAL flush, docs/POSTGRES.md).
    static let notifyCommits = PostgresStatement(name: "ckl_notify_commits", sql:
        "SELECT pg_notify('checklist_commits', $1)")

    /// Every list's revision, for a follower's reconciliation.
    static let allRevisions = PostgresStatement(name: "ckl_all_revisions", sql:
        "SELECT id, revision FROM lists")
}
