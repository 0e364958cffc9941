/// The statements of a commit's quota check (`PostgresStore.commit`
/// with `quotas`; docs/OPERATING.md, "Quotas"): run in the commit's
/// transaction before its writes, so that of two nodes committing to one
/// namespace the second waits for the first and counts what it wrote.
extension Statements {
    /// The SQLSTATE `checklist_quota_exceeded` raises (schema version 3):
    /// the check failed, and the rest of the commit's pipeline, its COMMIT
    /// included, does not run. Its message is `QUOTA <namespace index> <field> <held> <quota>`.
    static let quotaCheckFailed = "CKQ01"

    /// Locks the rows of the namespaces a commit changes, in name order:
    /// another node's commit to one of them waits here until this
    /// transaction ends. A statement of its own, so that the check after it
    /// takes its snapshot once the lock is held (READ COMMITTED).
    static let lockNamespaces = PostgresStatement(name: "ckl_lock_namespaces", sql:
        "SELECT name FROM namespaces WHERE name = ANY($1::text[]) ORDER BY name FOR UPDATE")

    /// Each namespace of `$1` as the database holds it (`held`) and as the
    /// commit's lists would leave it (`after`: the lists `$5` replaced by
    /// their new item counts `$7` and bytes `$8` + `$9`, a NULL count for a
    /// deleted list, a NULL `$9` keeping the stored `row_bytes`); a
    /// namespace left past a quota (`$2` lists, `$3` items, `$4` bytes,
    /// NULL: none) that it grows towards fails the statement through
    /// `checklist_quota_exceeded`. Bytes are those of names, icons, item
    /// texts and client keys, as the store counts them.
    static let checkQuotas = PostgresStatement(name: "ckl_check_quotas", sql: """
        WITH batch AS (
            SELECT * FROM unnest($5::int8[], $6::text[], $7::int8[], $8::int8[], $9::int8[])
                AS b(id, namespace, items, label_bytes, row_bytes)),
        held AS (
            SELECT l.id, l.namespace, l.item_count AS items, l.row_bytes,
                   octet_length(l.name) + octet_length(l.icon) + coalesce(l.row_bytes, 0) AS bytes
            FROM lists l WHERE l.namespace = ANY($1::text[])),
        before AS (
            SELECT namespace, count(*)::int8 AS lists, sum(items)::int8 AS items, sum(bytes)::int8 AS bytes
            FROM held GROUP BY namespace),
        after AS (
            SELECT namespace, count(*)::int8 AS lists, sum(items)::int8 AS items, sum(bytes)::int8 AS bytes FROM (
                SELECT h.namespace, h.items, h.bytes FROM held h WHERE NOT EXISTS (SELECT 1 FROM batch b WHERE b.id = h.id)
                UNION ALL
                SELECT b.namespace, b.items, b.label_bytes + coalesce(b.row_bytes, h.row_bytes, 0)
                FROM batch b LEFT JOIN held h ON h.id = b.id WHERE b.items IS NOT NULL) AS kept
            GROUP BY namespace),
        compared AS (
            SELECT n.i, coalesce(a.lists, 0) AS after_lists, coalesce(p.lists, 0) AS before_lists,
                   coalesce(a.items, 0) AS after_items, coalesce(p.items, 0) AS before_items,
                   coalesce(a.bytes, 0) AS after_bytes, coalesce(p.bytes, 0) AS before_bytes
            FROM unnest($1::text[]) WITH ORDINALITY AS n(namespace, i)
            LEFT JOIN after a ON a.namespace = n.namespace LEFT JOIN before p ON p.namespace = n.namespace),
        over AS (
            SELECT i, 'lists' AS field, after_lists AS held, $2::int8 AS quota FROM compared
                WHERE after_lists > $2::int8 AND after_lists > before_lists
            UNION ALL SELECT i, 'items', after_items, $3::int8 FROM compared
                WHERE after_items > $3::int8 AND after_items > before_items
            UNION ALL SELECT i, 'bytes', after_bytes, $4::int8 FROM compared
                WHERE after_bytes > $4::int8 AND after_bytes > before_bytes)
        SELECT checklist_quota_exceeded(i::int, field, held, quota) FROM over
        """)
}
