package opencode

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	_ "github.com/mattn/go-sqlite3" // OpenCode's database is SQLite

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/hookrpc"
)

// DBReader returns each reply of an OpenCode session once, with its exact
// text, from OpenCode's database (~/.local/share/opencode/opencode.db,
// SQLite in WAL mode, read here read-only). OpenCode stores each message
// in table message (data: {"role", "time": {"created", "completed"},
// "error"}) and its pieces in table part (data: {"type": "text", "text",
// "synthetic"}, in id order). An assistant message is final once it has
// time.completed or an error; a user message is a prompt once stored.
//
// The reader follows the newest session of the folder that OpenCode
// created or used since relay started it: a session relay started, or the
// user's own, resumed (/new makes a newer one, which it then follows).
// Only messages created since the start are read. It is not safe for
// concurrent use.
type DBReader struct {
	db      *sql.DB
	dir     string // the session's folder, as OpenCode stores it
	since   int64  // Unix ms: messages from then on
	session string
	seen    map[string]bool // message ids returned or skipped
	// current is session for other goroutines (Session).
	current atomic.Pointer[string]
	// At the last Read: replying, the session's newest message is a reply
	// not finished; waiting, Unix ms of the newest message when it is a
	// prompt (else 0); humanAt, Unix ms of the newest prompt not of
	// relay's. For Answering and HumanPromptSince.
	replying atomic.Bool
	waiting  atomic.Int64
	humanAt  atomic.Int64
}

// StuckPrompt is how long a prompt that no reply follows counts as
// waiting for its answer (Answering). OpenCode 1.18 leaves a prompt that
// reached it while a run was ending unanswered until the next prompt:
// after this long, a prompt is what it needs.
const StuckPrompt = 60 * time.Second

// Answering reports whether, at the last Read, the newest message of the
// session was a reply not finished, or a prompt (stored less than
// StuckPrompt ago): a prompt waits for its answer. OpenCode answers only the last of the prompts that reach it
// before its run reads the conversation again, so another prompt now
// would leave this one unanswered (or itself). Safe for concurrent use.
func (r *DBReader) Answering() bool {
	if r.replying.Load() {
		return true
	}
	at := r.waiting.Load()
	return at != 0 && time.Since(time.UnixMilli(at)) < StuckPrompt
}

// HumanPromptSince reports whether the last Read found a prompt not of
// relay's (its text does not start with "[relay]") stored at t or later.
// Safe for concurrent use.
func (r *DBReader) HumanPromptSince(t time.Time) bool {
	return r.humanAt.Load() >= t.UnixMilli()
}

// Session is the id of the session the reader follows, "" before it found
// one. Unlike the reader's other methods it is safe for concurrent use.
func (r *DBReader) Session() string {
	if p := r.current.Load(); p != nil {
		return *p
	}
	return ""
}

// DBPath is OpenCode's database for the environment env (XDG_DATA_HOME,
// else HOME/.local/share).
func DBPath(env []string) string {
	if v := lookup(env, "XDG_DATA_HOME"); v != "" {
		return filepath.Join(v, "opencode", "opencode.db")
	}
	home := lookup(env, "HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".local", "share", "opencode", "opencode.db")
}

// OpenDB opens the database at path read-only to follow the sessions of
// folder dir from since on. It wraps fs.ErrNotExist until OpenCode has
// made the database.
func OpenDB(path, dir string, since time.Time) (*DBReader, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open OpenCode database: %w", err)
	}
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?mode=ro&_busy_timeout=2000"
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("open OpenCode database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return &DBReader{db: db, dir: dir, since: since.UnixMilli(), seen: map[string]bool{}}, nil
}

// Close closes the database.
func (r *DBReader) Close() error { return r.db.Close() }

// findSession picks the newest session of the folder used since the
// start; it wraps fs.ErrNotExist when there is none.
func (r *DBReader) findSession() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var id string
	err := r.db.QueryRowContext(ctx, `SELECT id FROM session
		WHERE directory = ? AND parent_id IS NULL AND (time_created >= ? OR time_updated >= ?)
		ORDER BY time_created DESC, id DESC LIMIT 1`, r.dir, r.since, r.since).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if r.session != "" {
			return nil
		}
		return fmt.Errorf("find OpenCode session of %s: %w", r.dir, fs.ErrNotExist)
	case err != nil && strings.Contains(err.Error(), "no such table"):
		return fmt.Errorf("find OpenCode session of %s: %w", r.dir, fs.ErrNotExist)
	case err != nil:
		return fmt.Errorf("find OpenCode session of %s: %w", r.dir, err)
	}
	r.session = id
	r.current.Store(&id)
	return nil
}

// messageData is the part of a message's data the reader needs.
type messageData struct {
	Role string `json:"role"`
	Time struct {
		Completed int64 `json:"completed"`
	} `json:"time"`
	Error json.RawMessage `json:"error"`
}

// partData is the part of a part's data the reader needs.
type partData struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
	Ignored   bool   `json:"ignored"`
}

// Read returns the replies completed and the prompts stored since the last
// call (agents.ReplyFile), in order: a reply not yet complete holds back
// those after it.
func (r *DBReader) Read(bool) (replies, prompts []string, err error) {
	if err := r.findSession(); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rows, err := r.db.QueryContext(ctx, `SELECT m.id, m.time_created, m.data, p.data FROM message m
		LEFT JOIN part p ON p.message_id = m.id
		WHERE m.session_id = ? AND m.time_created >= ?
		ORDER BY m.time_created, m.id, p.id`, r.session, r.since)
	if err != nil {
		return nil, nil, fmt.Errorf("read OpenCode session %s: %w", r.session, err)
	}
	defer rows.Close()
	type message struct {
		id      string
		created int64 // Unix ms
		data    messageData
		texts   []string
	}
	var msgs []*message
	for rows.Next() {
		var id, mdata string
		var created int64
		var pdata sql.NullString
		if err := rows.Scan(&id, &created, &mdata, &pdata); err != nil {
			return nil, nil, fmt.Errorf("read OpenCode session %s: %w", r.session, err)
		}
		if len(msgs) == 0 || msgs[len(msgs)-1].id != id {
			m := &message{id: id, created: created}
			if err := json.Unmarshal([]byte(mdata), &m.data); err != nil {
				return nil, nil, fmt.Errorf("read OpenCode message %s: %w", id, err)
			}
			msgs = append(msgs, m)
		}
		var p partData
		if pdata.Valid && json.Unmarshal([]byte(pdata.String), &p) == nil &&
			p.Type == "text" && !p.Synthetic && !p.Ignored && strings.TrimSpace(p.Text) != "" {
			m := msgs[len(msgs)-1]
			m.texts = append(m.texts, p.Text)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("read OpenCode session %s: %w", r.session, err)
	}
	replying, waiting := false, int64(0)
	for i, m := range msgs {
		if i == len(msgs)-1 {
			replying = m.data.Role == "assistant" && m.data.Time.Completed == 0 && len(m.data.Error) == 0
			if m.data.Role == "user" {
				waiting = m.created
			}
		}
		if m.data.Role == "user" && len(m.texts) > 0 && !strings.HasPrefix(strings.TrimSpace(m.texts[0]), "[relay]") &&
			m.created > r.humanAt.Load() {
			r.humanAt.Store(m.created)
		}
	}
	r.replying.Store(replying)
	r.waiting.Store(waiting)
	for _, m := range msgs {
		if r.seen[m.id] {
			continue
		}
		switch m.data.Role {
		case "assistant":
			if m.data.Time.Completed == 0 && len(m.data.Error) == 0 {
				return replies, prompts, nil // later ones wait for it
			}
			if len(m.texts) > 0 {
				replies = append(replies, strings.Join(m.texts, "\n\n"))
			}
		case "user":
			// OpenCode stores a message before its parts: one without
			// text yet is read again.
			if len(m.texts) == 0 {
				continue
			}
			prompts = append(prompts, strings.Join(m.texts, "\n\n"))
		}
		r.seen[m.id] = true
	}
	return replies, prompts, nil
}

// exact follows OpenCode's database for the session in the folder relay
// starts it in.
func exact(l agents.Launch) (agents.Setup, error) {
	var (
		plugin string
		srv    *hookrpc.Server
	)
	if l.BeforeToolCall {
		var err error
		if plugin, srv, err = pluginSetup(l); err != nil {
			l.Log.Warn("BeforeToolCall handlers will not see OpenCode's tool calls", "err", err)
		}
	}
	env, err := configSetup(l, plugin)
	if err != nil {
		l.Log.Warn("relay's MCP tools and plugin will be missing in OpenCode", "err", err)
		if srv != nil {
			srv.Close()
			srv = nil
		}
	}
	path := DBPath(l.Env)
	since := l.Started
	if since.IsZero() {
		since = time.Now()
	}
	since = since.Add(-time.Second)     // OpenCode's clock reading, not ours
	var reader atomic.Pointer[DBReader] // set by the follower, read by the server
	find := func(int) (agents.ReplyFile, error) {
		rd := reader.Load()
		if rd == nil {
			var err error
			if rd, err = OpenDB(path, l.Dir, since); err != nil {
				return nil, err
			}
			reader.Store(rd)
		}
		// Pending until OpenCode stores a session of the folder.
		if err := rd.findSession(); err != nil {
			return nil, err
		}
		return rd, nil
	}
	var src agents.Source = agents.NewFollower("OpenCode's database", find, l.Log)
	if srv != nil {
		env = append(env, hookrpc.SocketEnv+"="+srv.Path())
		src = &hooks{Source: src, srv: srv, log: l.Log}
	}
	var args []string
	sargs, senv, server, err := serverSetup(l)
	switch {
	case err != nil:
		l.Log.Warn("relay types into OpenCode: its server is not started", "err", err)
	case server != nil:
		server.Session = func() string {
			if rd := reader.Load(); rd != nil {
				return rd.Session()
			}
			return ""
		}
		args, env = sargs, append(env, senv...)
		src = &direct{Source: src, Server: server, reader: &reader}
	}
	return agents.Setup{Args: args, Env: env, Source: src}, nil
}

// MinMajor and MinMinor are the oldest OpenCode relay was checked with:
// its database, OPENCODE_CONFIG_CONTENT merged last, prompt_async taking
// relay's message and part ids.
const (
	MinMajor = 1
	MinMinor = 18
)

// diagnose says where relay reads OpenCode's exact text and how it
// delivers, and checks its version.
func diagnose(_ context.Context, p agents.Probe) agents.Diagnosis {
	d := agents.Diagnosis{
		ExactText: "its database (" + DBPath(p.Env) + "), tables message and part, read-only; messages posted to its server (--port, prompt_async)",
		MCP:       "registered for each session (" + ConfigContentEnv + ", its last configuration layer), server relay",
	}
	v, older, ok := agents.Older(p.Version, MinMajor, MinMinor)
	switch {
	case !ok:
		d.Problem = fmt.Sprintf("cannot read OpenCode's version from %q", p.Version)
	case older:
		d.Problem = fmt.Sprintf("OpenCode %s is older than %d.%d, the first release relay was checked with", v, MinMajor, MinMinor)
		d.Fix = "npm install -g " + Package + "@latest"
	}
	return d
}

// lookup is the last value of key in env, or "".
func lookup(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}
