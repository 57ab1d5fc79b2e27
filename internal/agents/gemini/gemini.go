package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/relayhq/relay/internal/agents/internal/jsonl"
)

// TranscriptReader returns each reply of a Gemini CLI session once,
// with its exact text, from the session's chat transcript
// ($GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-*.jsonl). The
// screen of Gemini CLI is not a faithful record (its final redraw can lose
// lines, and it eats markdown), so this is its exact-text path.
//
// The transcript is JSON Lines: a header, then message records
// ({"id", "type": "user"|"gemini", "content", …}) and updates
// ({"$set": {…}}). A "gemini" record is written when its reply has ended,
// and may be written again with the same id (Gemini CLI 0.61.0 rewrites it
// with its toolCalls once they ran): the last version counts. So a reply is
// returned once it is settled: when a later message record follows it, or
// when the turn ends (Stop). It is not safe for concurrent use.
type TranscriptReader struct {
	path    string
	off     int64             // where the next unread line starts
	pending *geminiReply      // the last reply seen, not settled yet
	sent    map[string]string // id → text returned, for rewrites after Stop
	prompts []string          // user messages read, until Prompts takes them
}

type geminiReply struct{ id, text string }

// geminiRecord is the part of a transcript line the reader needs.
type geminiRecord struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Content json.RawMessage `json:"content"`
	Set     *struct {
		Messages []geminiRecord `json:"messages"`
	} `json:"$set"`
}

// ErrRewrite means Gemini CLI rewrote a reply, after it was returned,
// with a text that does not extend it: the new text is not returned.
var ErrRewrite = errors.New("gemini reply rewritten after it was read")

// NewTranscriptReader returns a reader that starts at the
// transcript's current end (its start when the file does not exist yet),
// so that a resumed session's old replies are not returned again.
func NewTranscriptReader(transcriptPath string) (*TranscriptReader, error) {
	r := &TranscriptReader{path: transcriptPath, sent: map[string]string{}}
	fi, err := os.Stat(transcriptPath)
	switch {
	case err == nil:
		r.off = fi.Size()
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("open Gemini CLI transcript: %w", err)
	}
	return r, nil
}

// NewTranscriptReaderAt returns a reader that starts at byte offset
// off: 0 for a session that relay started with a new --session-id, whose
// whole transcript is new.
func NewTranscriptReaderAt(transcriptPath string, off int64) *TranscriptReader {
	return &TranscriptReader{path: transcriptPath, off: off, sent: map[string]string{}}
}

// Prompts returns the text of the user messages read since the last call
// (each prompt that reached the model; tool results carry no text and are
// left out).
func (r *TranscriptReader) Prompts() []string {
	p := r.prompts
	r.prompts = nil
	return p
}

// FindTranscript returns the transcript of the session sessionID
// (as passed with `gemini --session-id`) under cliHome (GEMINI_CLI_HOME,
// else the home folder): Gemini CLI names it
// session-<date>T<hh-mm>-<first 8 characters of the id>.jsonl in the chats
// folder of the project. It wraps fs.ErrNotExist when there is none yet.
func FindTranscript(cliHome, sessionID string) (string, error) {
	if len(sessionID) < 8 || strings.ContainsAny(sessionID, `/\*?[`) {
		return "", fmt.Errorf("find Gemini CLI transcript: bad session id %q", sessionID)
	}
	pattern := filepath.Join(cliHome, ".gemini", "tmp", "*", "chats", "session-*-"+sessionID[:8]+".jsonl")
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return "", fmt.Errorf("find Gemini CLI transcript %s: %w", pattern, err)
	}
	if len(matches) == 0 {
		return "", fmt.Errorf("find Gemini CLI transcript %s: %w", pattern, fs.ErrNotExist)
	}
	return matches[len(matches)-1], nil // names sort by start time
}

// Next returns the replies settled since the last call, in order: those a
// later message record follows. An unterminated last line is left for the
// next call. A malformed line is skipped and reported in the error, with
// the replies read around it.
func (r *TranscriptReader) Next() ([]string, error) {
	return r.read()
}

// Stop is Next at the end of a turn: the last reply is final too. A later
// rewrite of it is returned only if it extends the text (the added part).
func (r *TranscriptReader) Stop() ([]string, error) {
	texts, err := r.read()
	return append(texts, r.settle()...), err
}

// settle marks the pending reply as returned and gives its text.
func (r *TranscriptReader) settle() []string {
	p := r.pending
	if p == nil {
		return nil
	}
	r.pending = nil
	r.sent[p.id] = p.text
	if strings.TrimSpace(p.text) == "" {
		return nil // a reply that is only a tool call
	}
	return []string{p.text}
}

// read consumes the complete lines written since the last call: pending
// replies are updated, and those that a later message record follows are
// settled and returned.
func (r *TranscriptReader) read() ([]string, error) {
	var texts []string
	err := jsonl.ReadNewLines(r.path, "Gemini CLI transcript", &r.off, func(line []byte) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		var rec geminiRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return err
		}
		t, err := r.record(rec)
		texts = append(texts, t...)
		return err
	})
	return texts, err
}

// record takes one line: a reply is kept (or replaced) until settled; any
// other message record settles the replies before it; a $set of the whole
// message list (a resumed or compressed history) marks its replies as old.
func (r *TranscriptReader) record(rec geminiRecord) ([]string, error) {
	if rec.Set != nil {
		for _, m := range rec.Set.Messages {
			if m.Type == "gemini" && m.ID != "" {
				if _, ok := r.sent[m.ID]; !ok && (r.pending == nil || r.pending.id != m.ID) {
					r.sent[m.ID] = geminiText(m.Content)
				}
			}
		}
		return nil, nil
	}
	if rec.ID == "" || rec.Type == "" {
		return nil, nil // the header, or a record of a kind relay does not read
	}
	if rec.Type != "gemini" {
		if rec.Type == "user" {
			if t := geminiText(rec.Content); strings.TrimSpace(t) != "" {
				r.prompts = append(r.prompts, t)
			}
		}
		return r.settle(), nil
	}
	text := geminiText(rec.Content)
	if old, ok := r.sent[rec.ID]; ok { // rewritten after it was returned
		switch {
		case text == old:
			return nil, nil
		case strings.HasPrefix(text, old):
			r.sent[rec.ID] = text
			if rest := strings.TrimLeft(text[len(old):], "\n"); strings.TrimSpace(rest) != "" {
				return []string{rest}, nil
			}
			return nil, nil
		default:
			return nil, fmt.Errorf("%w: reply %s", ErrRewrite, rec.ID)
		}
	}
	if r.pending != nil && r.pending.id == rec.ID {
		r.pending.text = text // the last version counts
		return nil, nil
	}
	texts := r.settle() // a new reply settles the one before it
	r.pending = &geminiReply{id: rec.ID, text: text}
	return texts, nil
}

// geminiText is a record's content as text: a string, or the text parts
// of a list of parts joined.
func geminiText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// ErrNoSession means Gemini CLI's command line leaves relay no way
// to know which transcript the session writes.
var ErrNoSession = errors.New("no session id relay can follow")

// Session returns the session id whose transcript relay follows for
// a Gemini CLI started with args, and the arguments to add: a new id
// (newID) passed as --session-id, or the user's own --session-id. Resuming
// (--resume, -r) or listing sessions, and headless runs (--prompt, -p)
// return ErrNoSession with the flag that stands in the way.
func Session(args []string, newID func() string) (id string, add []string, err error) {
	for i, a := range args {
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(a, "=")
		switch name {
		case "--session-id":
			if hasValue {
				return value, nil, nil
			}
			if i+1 < len(args) {
				return args[i+1], nil, nil
			}
			return "", nil, fmt.Errorf("%w: --session-id has no value", ErrNoSession)
		case "--resume", "-r", "--list-sessions", "--delete-session", "--prompt", "-p":
			return "", nil, fmt.Errorf("%w: Gemini CLI is started with %s", ErrNoSession, name)
		}
	}
	id = newID()
	return id, []string{"--session-id", id}, nil
}

// Home is the folder under which Gemini CLI keeps its .gemini state
// for a process with the environment env: GEMINI_CLI_HOME, else HOME.
func Home(env []string) string {
	for _, key := range []string{"GEMINI_CLI_HOME=", "HOME="} {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], key); ok && v != "" {
				return v
			}
		}
	}
	home, _ := os.UserHomeDir()
	return home
}
