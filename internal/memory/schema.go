package memory

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations bring the file's schema from version i to i+1 (the version is
// SQLite's PRAGMA user_version; 0 is an empty file). Append new steps, never
// edit old ones: files written by older relays are migrated through them.
func migrations() []func(ctx context.Context, tx *sql.Tx) error {
	return []func(ctx context.Context, tx *sql.Tx) error{
		migrate1, // memories with full-text search over the text
		migrate2, // tags, updated time, de-duplication keys, lengths and stats; the index covers tags
		migrate3, // vectors of the memories' meaning, keyed by memory id
		migrate4, // a count of deletions, for the in-memory vector index
		migrate5, // the vectors' int8 copies, so that the index never reads the float32s whole
	}
}

// schemaVersion is the version this relay writes.
func schemaVersion() int { return len(migrations()) }

// migrate applies the missing migrations in one write transaction, so that
// several processes opening a new file at once do it exactly once.
func (s *Store) migrate(ctx context.Context) error {
	var v int
	// A read first: it fails fast and clearly on a file that is not a
	// database, and spares the write lock when the schema is current.
	if err := s.db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return err
	}
	if v == schemaVersion() {
		return nil
	}
	return s.update(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
			return err
		}
		if v > schemaVersion() {
			return fmt.Errorf("schema version %d is newer than this relay knows (%d): upgrade relay", v, schemaVersion())
		}
		for i := v; i < schemaVersion(); i++ {
			if err := migrations()[i](ctx, tx); err != nil {
				return fmt.Errorf("migrate schema %d to %d: %w", i, i+1, err)
			}
		}
		_, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion()))
		return err
	})
}

func execAll(ctx context.Context, tx *sql.Tx, stmts ...string) error {
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%w (in %.60q)", err, q)
		}
	}
	return nil
}

func migrate1(ctx context.Context, tx *sql.Tx) error {
	return execAll(ctx, tx,
		`CREATE TABLE memories (
			seq        INTEGER PRIMARY KEY,
			id         TEXT NOT NULL UNIQUE,
			text       TEXT NOT NULL,
			author     TEXT NOT NULL DEFAULT '',
			workspace  TEXT NOT NULL DEFAULT '',
			scope      TEXT NOT NULL DEFAULT 'workspace',
			created_ms INTEGER NOT NULL
		)`,
		`CREATE VIRTUAL TABLE memories_fts USING fts5(text,
			content='memories', content_rowid='seq', tokenize='porter unicode61')`,
		`CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
			INSERT INTO memories_fts(rowid, text) VALUES (new.seq, new.text);
		END`,
		`CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
			INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.seq, old.text);
		END`,
	)
}

func migrate2(ctx context.Context, tx *sql.Tx) error {
	err := execAll(ctx, tx,
		`ALTER TABLE memories ADD COLUMN tags TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE memories ADD COLUMN updated_ms INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE memories ADD COLUMN scope_key TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE memories ADD COLUMN text_key TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE memories ADD COLUMN words INTEGER NOT NULL DEFAULT 0`,
		`UPDATE memories SET updated_ms = created_ms`,
		`DROP TRIGGER memories_ai`,
		`DROP TRIGGER memories_ad`,
		`DROP TABLE memories_fts`,
	)
	if err != nil {
		return err
	}
	// Fill the de-duplication keys; where version 1 held the same text twice
	// in one scope, keep the oldest and give it the newest time.
	type row struct {
		seq       int64
		m         Memory
		createdMs int64
	}
	rows, err := tx.QueryContext(ctx, `SELECT seq, text, author, workspace, scope, created_ms FROM memories ORDER BY seq`)
	if err != nil {
		return err
	}
	var all []row
	for rows.Next() {
		var r row
		var scope string
		if err := rows.Scan(&r.seq, &r.m.Text, &r.m.Author, &r.m.Workspace, &scope, &r.createdMs); err != nil {
			rows.Close()
			return err
		}
		r.m.Scope = Scope(scope)
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	first := map[[2]string]row{}
	for _, r := range all {
		k := [2]string{scopeKey(r.m), textKey(r.m.Text)}
		if f, dup := first[k]; dup {
			if _, err := tx.ExecContext(ctx, `UPDATE memories SET updated_ms = max(updated_ms, ?) WHERE seq = ?`, r.createdMs, f.seq); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM memories WHERE seq = ?`, r.seq); err != nil {
				return err
			}
			continue
		}
		first[k] = r
		if _, err := tx.ExecContext(ctx, `UPDATE memories SET scope_key = ?, text_key = ?, words = ? WHERE seq = ?`,
			k[0], k[1], countWords(r.m.Text), r.seq); err != nil {
			return err
		}
	}
	return execAll(ctx, tx,
		`CREATE UNIQUE INDEX memories_dedup ON memories(scope_key, text_key)`,
		`CREATE INDEX memories_updated ON memories(updated_ms)`,
		`CREATE INDEX memories_workspace ON memories(workspace, updated_ms)`,
		`CREATE VIRTUAL TABLE memories_fts USING fts5(text, tags,
			content='memories', content_rowid='seq', tokenize='porter unicode61')`,
		`CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
			INSERT INTO memories_fts(rowid, text, tags) VALUES (new.seq, new.text, new.tags);
		END`,
		`CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
			INSERT INTO memories_fts(memories_fts, rowid, text, tags) VALUES ('delete', old.seq, old.text, old.tags);
		END`,
		`CREATE TRIGGER memories_au AFTER UPDATE OF seq, text, tags ON memories BEGIN
			INSERT INTO memories_fts(memories_fts, rowid, text, tags) VALUES ('delete', old.seq, old.text, old.tags);
			INSERT INTO memories_fts(rowid, text, tags) VALUES (new.seq, new.text, new.tags);
		END`,
		`INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')`,
		// Search's BM25 needs the number of memories and their mean length.
		`CREATE TABLE stats (id INTEGER PRIMARY KEY CHECK (id = 1), docs INTEGER NOT NULL, words INTEGER NOT NULL)`,
		`INSERT INTO stats SELECT 1, count(*), coalesce(sum(words), 0) FROM memories`,
		`CREATE TRIGGER memories_stats_ai AFTER INSERT ON memories BEGIN
			UPDATE stats SET docs = docs + 1, words = words + new.words;
		END`,
		`CREATE TRIGGER memories_stats_ad AFTER DELETE ON memories BEGIN
			UPDATE stats SET docs = docs - 1, words = words - old.words;
		END`,
		`CREATE TRIGGER memories_stats_au AFTER UPDATE OF words ON memories BEGIN
			UPDATE stats SET words = words - old.words + new.words;
		END`,
	)
}

func migrate3(ctx context.Context, tx *sql.Tx) error {
	// vseq grows with every write, so that a process's in-memory index
	// reads only the rows written since it last looked. bits holds the
	// vector's signs (the coarse index, read whole into memory: kept apart
	// from the vectors so that reading it reads little); vectors_data the
	// unit vector as little-endian float32s.
	return execAll(ctx, tx,
		`CREATE TABLE vectors (
			vseq  INTEGER PRIMARY KEY AUTOINCREMENT,
			id    TEXT NOT NULL UNIQUE,
			model TEXT NOT NULL,
			dims  INTEGER NOT NULL,
			bits  BLOB NOT NULL
		)`,
		`CREATE TABLE vectors_data (vseq INTEGER PRIMARY KEY, vec BLOB NOT NULL)`,
		`CREATE TRIGGER vectors_data_ad AFTER DELETE ON vectors BEGIN
			DELETE FROM vectors_data WHERE vseq = old.vseq;
		END`,
		// The memories still to embed: every new one, whether or not an
		// embedder is configured, so that configuring one later embeds
		// them all.
		`CREATE TABLE vectors_pending (id TEXT PRIMARY KEY) WITHOUT ROWID`,
		`INSERT INTO vectors_pending SELECT id FROM memories`,
		// The model the vectors are made with; another model's are made
		// again.
		`CREATE TABLE vectors_model (one INTEGER PRIMARY KEY CHECK (one = 1), model TEXT NOT NULL)`,
		// How many vectors there are, so that an in-memory index can tell
		// cheaply that many of its entries were replaced or deleted.
		`CREATE TABLE vectors_count (one INTEGER PRIMARY KEY CHECK (one = 1), n INTEGER NOT NULL)`,
		`INSERT INTO vectors_count VALUES (1, 0)`,
		`CREATE TRIGGER vectors_count_ai AFTER INSERT ON vectors BEGIN
			UPDATE vectors_count SET n = n + 1;
		END`,
		`CREATE TRIGGER vectors_count_ad AFTER DELETE ON vectors BEGIN
			UPDATE vectors_count SET n = n - 1;
		END`,
		`CREATE TRIGGER memories_vectors_ai AFTER INSERT ON memories BEGIN
			INSERT OR IGNORE INTO vectors_pending(id) VALUES (new.id);
		END`,
		`CREATE TRIGGER memories_vectors_ad AFTER DELETE ON memories BEGIN
			DELETE FROM vectors WHERE id = old.id;
			DELETE FROM vectors_pending WHERE id = old.id;
		END`,
	)
}

func migrate4(ctx context.Context, tx *sql.Tx) error {
	// A process's in-memory vector index follows new vectors by vseq and
	// changed memories by seq (an update gives a memory a new seq, see
	// Save); a deletion it cannot see that way, and a deletion can let
	// SQLite hand a seq out again. Each one counts here, and a changed
	// count makes the index reload.
	return execAll(ctx, tx,
		`CREATE TABLE memories_deletes (one INTEGER PRIMARY KEY CHECK (one = 1), n INTEGER NOT NULL)`,
		`INSERT INTO memories_deletes VALUES (1, 0)`,
		`CREATE TRIGGER memories_deletes_ad AFTER DELETE ON memories BEGIN
			UPDATE memories_deletes SET n = n + 1;
		END`,
	)
}

func migrate5(ctx context.Context, tx *sql.Tx) error {
	// The in-memory index holds each vector's sign bits (vectors.bits) and
	// an int8 copy with its scale and error bound (quantize). Reading the
	// float32 vectors to make those copies took half a minute at 100,000
	// memories on a process's first search; the copies are now written
	// beside the vector, and made here once for the vectors already there.
	err := execAll(ctx, tx,
		`CREATE TABLE vectors_q8 (
			vseq  INTEGER PRIMARY KEY,
			scale REAL NOT NULL,
			errb  REAL NOT NULL,
			q8    BLOB NOT NULL
		)`,
		`CREATE TRIGGER vectors_q8_ad AFTER DELETE ON vectors BEGIN
			DELETE FROM vectors_q8 WHERE vseq = old.vseq;
		END`,
	)
	if err != nil {
		return err
	}
	return fillQ8(ctx, tx)
}
