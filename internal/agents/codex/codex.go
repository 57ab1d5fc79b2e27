package codex

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/relayhq/relay/internal/lazyre"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/relayhq/relay/internal/agents/internal/jsonl"
)

// RolloutReader returns each reply of a Codex session once, with its
// exact markdown, and each prompt that reached the model, from the
// session's rollout file ($CODEX_HOME/sessions/Y/M/D/rollout-*-<thread
// id>.jsonl). Codex's screen renders markdown (escapes, fences and
// emphasis are gone) and draws words one at a time, so the rollout is its
// exact-text path; reading it needs no configuration, no hook and no trust
// dialog.
//
// The file is JSON Lines: a session_meta record, then records of which the
// reader takes the response items that are messages: an assistant message
// (its output_text parts, written once the message is complete, also when
// a tool call follows it in the same response) is a reply; a user message
// (input_text parts) is a prompt. Everything else (events, tool calls and
// their output, token counts) is skipped. It is not safe for concurrent
// use.
type RolloutReader struct {
	path string
	off  int64               // where the next unread line starts
	seen map[string]struct{} // message ids returned, so a rewrite is not
}

// codexRecord is the part of a rollout line the reader needs.
type codexRecord struct {
	Type    string `json:"type"`
	Payload struct {
		Type    string `json:"type"`
		ID      string `json:"id"`
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		// session_meta
		Cwd       string `json:"cwd"`
		Timestamp string `json:"timestamp"`
	} `json:"payload"`
}

// Reading is what a RolloutReader read since its last call.
type Reading struct {
	Replies []string // the exact text of each finished assistant message, in order
	Prompts []string // the text of each user message that reached the model
}

// NewRolloutReader returns a reader of the rollout at path from byte
// offset from: 0 for a session that started with the wrapper (its whole
// file is new), the file's size for a resumed one (its old replies must
// not fire again).
func NewRolloutReader(path string, from int64) *RolloutReader {
	return &RolloutReader{path: path, off: from, seen: map[string]struct{}{}}
}

// Path is the rollout file the reader reads.
func (r *RolloutReader) Path() string { return r.path }

// Next returns the replies and prompts written since the last call, in
// the file's order. An unterminated last line is left for the next call. A
// malformed line is skipped and reported in the error, with what was read
// around it.
func (r *RolloutReader) Next() (Reading, error) {
	var out Reading
	err := jsonl.ReadNewLines(r.path, "Codex rollout", &r.off, func(line []byte) error {
		if !bytes.Contains(line, []byte(`"response_item"`)) {
			return nil // most lines: events, token counts, turn context
		}
		var rec codexRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return err
		}
		p := rec.Payload
		if rec.Type != "response_item" || p.Type != "message" {
			return nil
		}
		if p.ID != "" {
			if _, dup := r.seen[p.ID]; dup {
				return nil
			}
			r.seen[p.ID] = struct{}{}
		}
		var b strings.Builder
		for _, c := range p.Content {
			if c.Type == "output_text" || c.Type == "input_text" {
				b.WriteString(c.Text)
			}
		}
		text := b.String()
		if strings.TrimSpace(text) == "" {
			return nil
		}
		switch p.Role {
		case "assistant":
			out.Replies = append(out.Replies, text)
		case "user":
			out.Prompts = append(out.Prompts, text)
		}
		return nil
	})
	return out, err
}

// Home is the folder Codex keeps its state in for a process with the
// environment env: CODEX_HOME, else ~/.codex.
func Home(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "CODEX_HOME="); ok && v != "" {
			return v
		}
	}
	home := ""
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "HOME="); ok {
			home = v
			break
		}
	}
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".codex")
}

// codexThreadRE is a Codex thread id (a UUID) at the end of a file name.
var codexThreadRE = lazyre.New(`([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(\.lock|\.jsonl)$`)

// Thread returns the id of the thread a running Codex works on, from
// the files it holds open (see OpenFiles): from its first screen on, Codex
// 0.169.0 holds $CODEX_HOME/thread-writer-locks/<thread id>.lock, and,
// from the first prompt on, the thread's rollout file. "" when none is
// among files.
func Thread(codexHome string, files []string) string {
	locks := filepath.Join(filepath.Clean(codexHome), "thread-writer-locks") + string(filepath.Separator)
	sessions := filepath.Join(filepath.Clean(codexHome), "sessions") + string(filepath.Separator)
	for _, f := range files {
		if !strings.HasPrefix(f, locks) && !strings.HasPrefix(f, sessions) {
			continue
		}
		if m := codexThreadRE().FindStringSubmatch(filepath.Base(f)); m != nil {
			return m[1]
		}
	}
	return ""
}

// FindRollout returns the rollout file of thread under codexHome. It
// wraps fs.ErrNotExist while there is none (Codex writes it at the first
// prompt).
func FindRollout(codexHome, thread string) (string, error) {
	if !codexThreadRE().MatchString(thread + ".jsonl") {
		return "", fmt.Errorf("find Codex rollout: bad thread id %q", thread)
	}
	pattern := filepath.Join(codexHome, "sessions", "*", "*", "*", "rollout-*-"+thread+".jsonl")
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return "", fmt.Errorf("find Codex rollout %s: %w", pattern, err)
	}
	if len(matches) == 0 {
		return "", fmt.Errorf("find Codex rollout %s: %w", pattern, fs.ErrNotExist)
	}
	return matches[len(matches)-1], nil
}

// ErrAmbiguous means several new Codex sessions in the same folder
// could be the wrapped one.
var ErrAmbiguous = errors.New("several new Codex sessions in this folder")

// FindNewRollout returns the rollout of a Codex session that started
// in folder cwd at or after since: the way to find a session's file where
// the open files of a process cannot be read. It wraps fs.ErrNotExist
// while there is none, and returns ErrAmbiguous when there are
// several (two Codex started in one folder at once).
func FindNewRollout(codexHome, cwd string, since time.Time) (string, error) {
	var found []string
	for _, day := range []time.Time{since, time.Now()} {
		dir := filepath.Join(codexHome, "sessions", day.Format("2006"), day.Format("01"), day.Format("02"))
		names, _ := filepath.Glob(filepath.Join(dir, "rollout-*.jsonl"))
		for _, n := range names {
			if fi, err := os.Stat(n); err != nil || fi.ModTime().Before(since) {
				continue
			}
			meta, err := codexSessionMeta(n)
			if err != nil || filepath.Clean(meta.Payload.Cwd) != filepath.Clean(cwd) {
				continue
			}
			started, err := time.Parse(time.RFC3339Nano, meta.Payload.Timestamp)
			if err != nil || started.Before(since.Add(-time.Second)) {
				continue
			}
			if !slices.Contains(found, n) {
				found = append(found, n)
			}
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("find Codex rollout in %s since %s: %w", filepath.Join(codexHome, "sessions"), since.Format(time.RFC3339), fs.ErrNotExist)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%w: %s", ErrAmbiguous, strings.Join(found, ", "))
}

// codexSessionMeta reads a rollout's first line.
func codexSessionMeta(path string) (codexRecord, error) {
	var rec codexRecord
	f, err := os.Open(path)
	if err != nil {
		return rec, err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 16<<10).ReadBytes('\n')
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(line, &rec); err != nil {
		return rec, err
	}
	if rec.Type != "session_meta" {
		return rec, fmt.Errorf("%s: first record is %q, not session_meta", path, rec.Type)
	}
	return rec, nil
}

// SessionStarted returns when the session of a rollout file started,
// from its session_meta record: a session older than the wrapper is a
// resumed one.
func SessionStarted(path string) (time.Time, error) {
	meta, err := codexSessionMeta(path)
	if err != nil {
		return time.Time{}, fmt.Errorf("read Codex rollout %s: %w", path, err)
	}
	t, err := time.Parse(time.RFC3339Nano, meta.Payload.Timestamp)
	if err != nil {
		return time.Time{}, fmt.Errorf("read Codex rollout %s: session start: %w", path, err)
	}
	return t, nil
}
