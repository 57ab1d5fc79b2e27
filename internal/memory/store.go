package memory

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	_ "github.com/mattn/go-sqlite3" // the SQLite driver; build with -tags sqlite_fts5

	"github.com/relayhq/relay/internal/mailbox"
)

// Options tune a Store. The zero value (or nil) means the defaults.
type Options struct {
	// BusyTimeout is how long a call waits for another process's write lock
	// before failing with "database is locked". Default 10s.
	BusyTimeout time.Duration
	// HalfLife sets the recency factor of search ranking: a memory updated
	// HalfLife ago gets half the boost of a brand-new one. Default 30 days.
	HalfLife time.Duration
	// Now is the clock; default time.Now. Tests set it.
	Now func() time.Time
	// Embedder, when set, gives each memory a vector of its meaning,
	// made in the background after Save, and lets Search find memories
	// by meaning (Query.Mode). Nil: memory is lexical only.
	Embedder Embedder
	// EmbedRetry is the first wait after the embedder failed, doubling
	// up to EmbedRetryMax; defaults 1 s and 1 min. EmbedPoll is how often
	// the background loop looks for memories saved by other processes;
	// default 30 s.
	EmbedRetry, EmbedRetryMax, EmbedPoll time.Duration
	// NoBackground leaves the background embedding out (Reindex still
	// embeds): for a short-lived process such as one CLI command.
	NoBackground bool
	// Logger receives the background loop's failures; nil discards them.
	Logger *slog.Logger
}

// withDefaults returns a copy of o with every zero field filled in; it is
// the one place defaults live.
func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.BusyTimeout <= 0 {
		r.BusyTimeout = 10 * time.Second
	}
	if r.HalfLife <= 0 {
		r.HalfLife = 30 * 24 * time.Hour
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.EmbedRetry <= 0 {
		r.EmbedRetry = time.Second
	}
	if r.EmbedRetryMax < r.EmbedRetry {
		r.EmbedRetryMax = max(r.EmbedRetry, time.Minute)
	}
	if r.EmbedPoll <= 0 {
		r.EmbedPoll = 30 * time.Second
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	return r
}

// MaxTextBytes is the longest memory text Save accepts. Memories are notes,
// not documents; a longer text is refused with ErrInvalid rather than cut.
const MaxTextBytes = 4096

// Store is a memory store in one SQLite file. It is safe for concurrent use
// by several goroutines, and several processes may open the same file.
type Store struct {
	db   *sql.DB
	path string
	opts Options

	// With an embedder: the in-memory index of semantic search, and the
	// background loop (woken by saves, stopped by Close).
	index     *vecIndex
	wake      mailbox.Signal
	stopEmbed context.CancelFunc
	embedDone chan struct{}

	// lex holds the filter fields and the searched terms' sets for
	// lexical search (lexindex.go).
	lex lexIndex
}

var _ API = (*Store)(nil)

// Open opens (creating it if needed, with its folder) the store file at
// path and brings its schema up to date. Errors name the path, for example
// "open memory store /x/memory.db: file is not a database".
func Open(path string, opts *Options) (*Store, error) {
	o := opts.withDefaults()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open memory store %s: %w", path, err)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("open memory store %s: is a directory", path)
	}
	if err := makePrivate(path); err != nil {
		return nil, fmt.Errorf("open memory store %s: %w", path, err)
	}
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(o.BusyTimeout.Milliseconds()))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_txlock", "immediate")
	q.Set("_cache_size", "-32768") // KiB: 32 MiB of pages per connection
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("open memory store %s: %w", path, err)
	}
	s := &Store{db: db, path: path, opts: o, index: &vecIndex{}, wake: mailbox.NewSignal()}
	if err := s.migrate(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("open memory store %s: %w", path, err)
	}
	if o.Embedder != nil {
		if err := s.startEmbedding(); err != nil {
			db.Close()
			return nil, fmt.Errorf("open memory store %s: %w", path, err)
		}
	}
	return s, nil
}

// makePrivate creates the store file 0600 when it is missing, so that
// SQLite, which gives its -wal and -shm files the database file's mode,
// creates those 0600 too; and it takes group and other permissions away
// from the files an older relay created 0644. Memories are the team's
// notes: no other user of the machine reads them.
func makePrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		if err := os.Chmod(p, fi.Mode().Perm()&0o700); err != nil {
			return fmt.Errorf("make %s private: %w", p, err)
		}
	}
	return nil
}

// Path returns the file the store was opened from.
func (s *Store) Path() string { return s.path }

// Close stops the background embedding, if any, and closes the file.
// Calls after Close fail.
func (s *Store) Close() error {
	if s.stopEmbed != nil {
		s.stopEmbed()
		<-s.embedDone
	}
	s.lex.close()
	s.index.close()
	return s.db.Close()
}

// update runs fn in an immediate (write-locked) transaction: it commits when
// fn returns nil and rolls back otherwise.
func (s *Store) update(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // a no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

const memoryColumns = `m.id, m.text, m.tags, m.author, m.workspace, m.scope, m.created_ms, m.updated_ms`

type scanner interface{ Scan(dest ...any) error }

func scanMemory(row scanner, extra ...any) (Memory, error) {
	var m Memory
	var tags, scope string
	var created, updated int64
	dest := append([]any{&m.ID, &m.Text, &tags, &m.Author, &m.Workspace, &scope, &created, &updated}, extra...)
	if err := row.Scan(dest...); err != nil {
		return Memory{}, err
	}
	m.Tags = strings.Fields(tags)
	m.Scope = Scope(scope)
	m.Created = time.UnixMilli(created).UTC()
	m.Updated = time.UnixMilli(updated).UTC()
	return m, nil
}

// Save implements API.
func (s *Store) Save(ctx context.Context, m Memory) (Memory, bool, error) {
	m, err := s.normalize(m)
	if err != nil {
		return Memory{}, false, err
	}
	now := s.opts.Now().UnixMilli()
	var created bool
	err = s.update(ctx, func(tx *sql.Tx) error {
		old, seq, err := getBy(ctx, tx, `m.scope_key = ? AND m.text_key = ?`, scopeKey(m), textKey(m.Text))
		switch {
		case err == nil:
			// A new seq too: seq order is save order, which search's
			// window relies on (see searchWindow).
			tags := mergeTags(old.Tags, m.Tags)
			if _, err := tx.ExecContext(ctx, `UPDATE memories SET updated_ms = ?, tags = ?, words = ?,
				seq = (SELECT max(seq) + 1 FROM memories) WHERE seq = ?`,
				max(now, old.Updated.UnixMilli()), strings.Join(tags, " "), countWords(old.Text+" "+strings.Join(tags, " ")), seq); err != nil {
				return err
			}
			old.Tags, old.Updated = tags, time.UnixMilli(max(now, old.Updated.UnixMilli())).UTC()
			m = old
			return nil
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		if m.ID, err = newID(ctx, tx); err != nil {
			return err
		}
		m.Created, m.Updated = time.UnixMilli(now).UTC(), time.UnixMilli(now).UTC()
		created = true
		return insert(ctx, tx, m)
	})
	if err != nil {
		return Memory{}, false, fmt.Errorf("save memory in %s: %w", s.path, err)
	}
	if created {
		s.wakeEmbedder()
	}
	return m, created, nil
}

func insert(ctx context.Context, tx *sql.Tx, m Memory) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO memories
		(id, text, tags, author, workspace, scope, created_ms, updated_ms, scope_key, text_key, words)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ID, m.Text, strings.Join(m.Tags, " "), m.Author, m.Workspace, string(m.Scope),
		m.Created.UnixMilli(), m.Updated.UnixMilli(), scopeKey(m), textKey(m.Text),
		countWords(m.Text+" "+strings.Join(m.Tags, " ")))
	return err
}

// normalize checks m and puts it in the stored form: trimmed text, known
// scope, clean tags.
func (s *Store) normalize(m Memory) (Memory, error) {
	m.Text = strings.TrimSpace(m.Text)
	if m.Text == "" {
		return m, fmt.Errorf("%w: memory text is empty", ErrInvalid)
	}
	if len(m.Text) > MaxTextBytes {
		return m, fmt.Errorf("%w: memory text is %d bytes; the most is %d", ErrInvalid, len(m.Text), MaxTextBytes)
	}
	var err error
	if m.Scope, err = ParseScope(string(m.Scope)); err != nil {
		return m, err
	}
	if m.Scope == ScopeAgent && m.Author == "" {
		return m, fmt.Errorf("%w: an agent-scoped memory needs an author", ErrInvalid)
	}
	m.Author = strings.TrimSpace(m.Author)
	m.Workspace = strings.TrimSpace(m.Workspace)
	m.Tags = NormalizeTags(m.Tags)
	return m, nil
}

// NormalizeTags lower-cases tags, drops a leading '#', empty ones and
// duplicates, splits any with spaces inside, and sorts them.
func NormalizeTags(tags []string) []string {
	var out []string
	for _, t := range tags {
		for _, f := range strings.FieldsFunc(t, func(r rune) bool { return unicode.IsSpace(r) || r == ',' }) {
			f = strings.ToLower(strings.TrimLeft(f, "#"))
			if f != "" {
				out = append(out, f)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func mergeTags(a, b []string) []string {
	return NormalizeTags(append(slices.Clone(a), b...))
}

// scopeKey says which memories count as "the same scope" for
// de-duplication.
func scopeKey(m Memory) string {
	switch m.Scope {
	case ScopeGlobal:
		return "g"
	case ScopeAgent:
		return "a\x1f" + m.Workspace + "\x1f" + m.Author
	}
	return "w\x1f" + m.Workspace
}

// textKey is a hash of the text with case and runs of white space ignored.
func textKey(text string) string {
	norm := strings.ToLower(strings.Join(strings.Fields(text), " "))
	sum := sha256.Sum256([]byte(norm))
	return hex.EncodeToString(sum[:16])
}

// idAlphabet is Crockford's base32 in lower case: no i, l, o or u, so an id
// read aloud or retyped is hard to get wrong.
const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// idLen is the length of an id: 40 random bits.
const idLen = 8

func newID(ctx context.Context, tx *sql.Tx) (string, error) {
	for range 10 {
		var b [idLen]byte
		rand.Read(b[:])
		for i := range b {
			b[i] = idAlphabet[b[i]&31]
		}
		id := string(b[:])
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM memories WHERE id = ?`, id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return id, nil
		}
		if err != nil {
			return "", err
		}
	}
	return "", errors.New("no free id after 10 tries")
}

// NormalizeID turns what a person typed into an id: it trims white space
// and brackets, lower-cases, and maps the look-alikes i, l to 1 and o to 0.
// It returns ErrNotFound when the result cannot be an id.
func NormalizeID(s string) (string, error) {
	s = strings.ToLower(strings.Trim(strings.TrimSpace(s), "[]#"))
	s = strings.NewReplacer("i", "1", "l", "1", "o", "0").Replace(s)
	if len(s) != idLen || strings.Trim(s, idAlphabet) != "" {
		return "", fmt.Errorf("%w: %q is not a memory id (ids are %d letters and digits)", ErrNotFound, s, idLen)
	}
	return s, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getBy(ctx context.Context, q querier, where string, args ...any) (Memory, int64, error) {
	var seq int64
	m, err := scanMemory(q.QueryRowContext(ctx, `SELECT `+memoryColumns+`, m.seq FROM memories m WHERE `+where, args...), &seq)
	return m, seq, err
}

// Get implements API.
func (s *Store) Get(ctx context.Context, id string) (Memory, error) {
	nid, err := NormalizeID(id)
	if err != nil {
		return Memory{}, err
	}
	m, _, err := getBy(ctx, s.db, `m.id = ?`, nid)
	if errors.Is(err, sql.ErrNoRows) {
		return Memory{}, fmt.Errorf("%w: no memory has id %s", ErrNotFound, nid)
	}
	if err != nil {
		return Memory{}, fmt.Errorf("get memory %s from %s: %w", nid, s.path, err)
	}
	return m, nil
}

// Forget implements API.
func (s *Store) Forget(ctx context.Context, id string) (Memory, error) {
	nid, err := NormalizeID(id)
	if err != nil {
		return Memory{}, err
	}
	var m Memory
	err = s.update(ctx, func(tx *sql.Tx) error {
		var seq int64
		if m, seq, err = getBy(ctx, tx, `m.id = ?`, nid); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM memories WHERE seq = ?`, seq)
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return Memory{}, fmt.Errorf("%w: no memory has id %s", ErrNotFound, nid)
	}
	if err != nil {
		return Memory{}, fmt.Errorf("forget memory %s in %s: %w", nid, s.path, err)
	}
	return m, nil
}

// where turns f into an SQL condition on the memories table aliased m.
func (f Filter) where() (string, []any) {
	conds := []string{"1"}
	var args []any
	if f.Workspace != "" {
		conds = append(conds, `(m.workspace = ? OR m.scope = 'global')`)
		args = append(args, f.Workspace)
	}
	if f.Viewer != "" {
		conds = append(conds, `(m.scope <> 'agent' OR m.author = ?)`)
		args = append(args, f.Viewer)
	}
	if f.Author != "" {
		conds = append(conds, `m.author = ?`)
		args = append(args, f.Author)
	}
	if f.Scope != "" {
		conds = append(conds, `m.scope = ?`)
		args = append(args, string(f.Scope))
	}
	for _, t := range NormalizeTags(f.Tags) {
		conds = append(conds, `instr(' ' || m.tags || ' ', ?) > 0`)
		args = append(args, " "+t+" ")
	}
	return strings.Join(conds, " AND "), args
}

// List implements API.
func (s *Store) List(ctx context.Context, f Filter) ([]Memory, error) {
	where, args := f.where()
	args = append(args, clampLimit(f.Limit, DefaultListLimit))
	rows, err := s.db.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories m WHERE `+where+
		` ORDER BY m.updated_ms DESC, m.seq DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("list memories in %s: %w", s.path, err)
	}
	defer rows.Close()
	var out []Memory
	for rows.Next() {
		m, err := scanMemory(rows)
		if err != nil {
			return nil, fmt.Errorf("list memories in %s: %w", s.path, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list memories in %s: %w", s.path, err)
	}
	return out, nil
}
