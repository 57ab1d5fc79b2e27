package memory

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// benchFile returns the path of a cached benchmark store of n generated
// memories (with their vectors from em when em is not nil), building it
// first when it is missing. The name carries the generator's and the
// schema's versions, so a change of either builds anew.
func benchFile(b *testing.B, kind string, n int, vocab []string, now time.Time, em *wordEmbedder) string {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("relay-memory-bench-%sv%d-s%d-%d.db", kind, benchGeneration, schemaVersion(), n))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	start := time.Now()
	tmp := path + ".building"
	for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm", tmp + "-journal"} {
		os.Remove(p)
	}
	if err := buildBenchFile(context.Background(), tmp, n, vocab, now, em); err != nil {
		b.Fatalf("build %s: %v", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %s in %v", path, time.Since(start).Round(time.Millisecond))
	return path
}

// buildBenchFile writes n memories made by textGen (seed 1, ids
// 00000000…) into a new store at path, with their vectors when em is not
// nil, as saves and the background embedding would store them, but in
// one transaction through prepared statements, without a journal, the
// vectors made on every core: a million memories with vectors take
// minutes, not the better part of an hour.
func buildBenchFile(ctx context.Context, path string, n int, vocab []string, now time.Time, em *wordEmbedder) error {
	st, err := Open(path, &Options{Now: func() time.Time { return now }})
	if err != nil {
		return err
	}
	st.Close()
	q := url.Values{}
	q.Set("_journal_mode", "OFF")
	q.Set("_synchronous", "OFF")
	q.Set("_cache_size", "-524288") // 512 MiB
	db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	prep := func(query string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var s *sql.Stmt
		s, err = tx.PrepareContext(ctx, query)
		return s
	}
	insMem := prep(`INSERT INTO memories
		(id, text, tags, author, workspace, scope, created_ms, updated_ms, scope_key, text_key, words)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	insVec := prep(`INSERT INTO vectors(id, model, dims, bits) VALUES (?, ?, ?, ?)`)
	insData := prep(`INSERT INTO vectors_data(vseq, vec) VALUES (?, ?)`)
	insQ8 := prep(`INSERT INTO vectors_q8(vseq, scale, errb, q8) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	norm := &Store{}
	g := newTextGen(vocab, 1)
	const batch = 1024
	ms := make([]Memory, 0, batch)
	texts := make([]string, 0, batch)
	vecs := make([][]float32, batch)
	q8 := make([]byte, benchDims)
	for done := 0; done < n; {
		ms, texts = ms[:0], texts[:0]
		for ; done < n && len(ms) < batch; done++ {
			m, err := norm.normalize(g.memory(now))
			if err != nil {
				return err
			}
			m.ID = fmt.Sprintf("%08d", done)
			ms, texts = append(ms, m), append(texts, m.Text)
		}
		if em != nil {
			parallel(len(texts), 64, func(lo, hi int) {
				vs, _ := em.Embed(ctx, texts[lo:hi])
				for i, v := range vs {
					vecs[lo+i] = unit(v)
				}
			})
		}
		for i, m := range ms {
			tags := strings.Join(m.Tags, " ")
			if _, err := insMem.ExecContext(ctx, m.ID, m.Text, tags, m.Author, m.Workspace, string(m.Scope),
				m.Created.UnixMilli(), m.Updated.UnixMilli(), scopeKey(m), textKey(m.Text),
				countWords(m.Text+" "+tags)); err != nil {
				return fmt.Errorf("memory %s: %w", m.ID, err)
			}
			if em == nil {
				continue
			}
			v := vecs[i]
			res, err := insVec.ExecContext(ctx, m.ID, em.Model(), len(v), encodeBits(signBits(v)))
			if err != nil {
				return err
			}
			vseq, err := res.LastInsertId()
			if err != nil {
				return err
			}
			if _, err := insData.ExecContext(ctx, vseq, encodeVec(v)); err != nil {
				return err
			}
			c, scale, errb := quantize(v)
			for j, x := range c {
				q8[j] = byte(x)
			}
			if _, err := insQ8.ExecContext(ctx, vseq, float64(scale), float64(errb), q8); err != nil {
				return err
			}
		}
	}
	if em != nil {
		err = execAll(ctx, tx, `DELETE FROM vectors_pending`,
			`INSERT OR REPLACE INTO vectors_model(one, model) VALUES (1, '`+em.Model()+`')`)
		if err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, `INSERT INTO memories_fts(memories_fts) VALUES ('optimize')`)
	return err
}
