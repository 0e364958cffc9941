/// One versioned step of the schema: constant SQL run in one transaction
/// together with the row that records it in `checklist_schema_version`.
public struct SchemaStep: Sendable {
    /// 1, 2, 3, ...: steps run in this order, each once per database.
    public let version: Int
    /// What the step does, recorded in the version table for an operator.
    public let description: String
    /// The DDL (several statements allowed; no parameters).
    public let sql: StaticString

    public init(version: Int, description: String, sql: StaticString) {
        self.version = version
        self.description = description
        self.sql = sql
    }
}

extension SchemaStep {
    /// The steps this binary knows, oldest first. Never edit a released
    /// step: add the next one.
    public static let all: [SchemaStep] = [version1, version2, version3]

    /// The schema version this binary creates and expects.
    public static var latestVersion: Int { all.last?.version ?? 0 }

    /// Version 1: the tables of docs/POSTGRES.md.
    static let version1 = SchemaStep(version: 1, description: "namespaces, lists, checkpoints, changes, idempotency", sql: """
        CREATE TABLE checklist_settings (
            name  text PRIMARY KEY,
            value bigint NOT NULL
        );
        INSERT INTO checklist_settings (name, value) VALUES ('next_list_id', 1);
        CREATE TABLE namespaces (
            name       text PRIMARY KEY,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE lists (
            id                  bigint PRIMARY KEY CHECK (id > 0),
            namespace           text NOT NULL REFERENCES namespaces (name),
            name                text NOT NULL,
            icon                text NOT NULL,
            name_bytes          bytea,
            icon_bytes          bytea,
            item_count          bigint NOT NULL CHECK (item_count >= 0),
            unchecked_count     bigint NOT NULL CHECK (unchecked_count >= 0),
            revision            bigint NOT NULL CHECK (revision > 0),
            next_item_id        bigint NOT NULL CHECK (next_item_id > 0),
            checkpoint_revision bigint NOT NULL DEFAULT 0,
            updated_at          timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX lists_by_namespace ON lists (namespace, id);
        CREATE TABLE list_checkpoints (
            list_id  bigint NOT NULL REFERENCES lists (id) ON DELETE CASCADE,
            part     integer NOT NULL,
            revision bigint NOT NULL,
            data     bytea NOT NULL,
            PRIMARY KEY (list_id, part)
        );
        CREATE TABLE changes (
            list_id      bigint NOT NULL,
            revision     bigint NOT NULL,
            namespace    text NOT NULL,
            kind         smallint NOT NULL,
            body         bytea NOT NULL,
            committed_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (list_id, revision)
        );
        CREATE TABLE idempotency_clients (
            namespace text NOT NULL,
            client    bigint NOT NULL,
            floor     bigint NOT NULL DEFAULT 0,
            last_used timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (namespace, client)
        );
        CREATE TABLE idempotency_answers (
            namespace   text NOT NULL,
            client      bigint NOT NULL,
            sequence    bigint NOT NULL,
            list_id     bigint NOT NULL,
            revision    bigint NOT NULL,
            inserted    bytea NOT NULL,
            answered_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (namespace, client, sequence)
        );
        """)

    /// Version 2: `lists.change_bytes`, the bytes of the stored changes
    /// after the list's checkpoint, so that choosing the lists due a
    /// checkpoint reads `lists` alone (`Statements.compactionCandidates`).
    /// Filled here from the changes already stored.
    static let version2 = SchemaStep(version: 2, description: "lists.change_bytes: the bytes of the changes after the checkpoint", sql: """
        ALTER TABLE lists ADD COLUMN change_bytes bigint NOT NULL DEFAULT 0;
        UPDATE lists AS l SET change_bytes = (SELECT coalesce(sum(octet_length(c.body)), 0) FROM changes c
                                              WHERE c.list_id = l.id AND c.revision > l.checkpoint_revision);
        """)

    /// Version 3: quotas checked against the database's counts
    /// (docs/OPERATING.md, "Quotas"). `lists.row_bytes`: the UTF-8 bytes
    /// of the list's item texts and client keys (NULL for rows written
    /// before, counted as 0 until the list is written again), and
    /// `checklist_quota_exceeded`, which a commit's quota check calls to
    /// fail its transaction with SQLSTATE CKQ01 (`Statements.checkQuotas`).
    static let version3 = SchemaStep(version: 3, description: "lists.row_bytes and checklist_quota_exceeded: quotas on the database's counts", sql: """
        ALTER TABLE lists ADD COLUMN row_bytes bigint;
        CREATE FUNCTION checklist_quota_exceeded(namespace_index integer, field text, held bigint, quota bigint)
            RETURNS integer LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'QUOTA % % % %', namespace_index, field, held, quota USING ERRCODE = 'CKQ01';
        END
        $$;
        """)
}
