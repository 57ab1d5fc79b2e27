package qwen

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/agents/gemini"
	"github.com/relayhq/relay/internal/agents/internal/jsonl"
)

// ChatReader returns each reply of a Qwen Code session once, with its
// exact text, from the session's chat record
// (~/.qwen/projects/<folder>/chats/<session id>.jsonl). The record is JSON
// Lines, appended to: {"uuid", "type": "user"|"assistant"|"system",
// "message": {"parts": [{"text"}, …]}, …}; an assistant record is written
// once its reply has ended. It is not safe for concurrent use.
type ChatReader struct {
	path    string
	off     int64
	seen    map[string]bool // uuids returned
	prompts []string
}

// chatRecord is the part of a record the reader needs.
type chatRecord struct {
	UUID       string `json:"uuid"`
	Type       string `json:"type"`
	Provenance string `json:"provenance"`
	Message    struct {
		Parts []struct {
			Text    string `json:"text"`
			Thought bool   `json:"thought"`
		} `json:"parts"`
	} `json:"message"`
}

// NewChatReaderAt returns a reader of the chat record at path from byte
// offset off (0 for a session relay started, whose record is new).
func NewChatReaderAt(path string, off int64) *ChatReader {
	return &ChatReader{path: path, off: off, seen: map[string]bool{}}
}

// Read returns the replies and the prompts written since the last call
// (agents.ReplyFile); a reply is complete once written, so idle changes
// nothing.
func (r *ChatReader) Read(bool) (replies, prompts []string, err error) {
	err = jsonl.ReadNewLines(r.path, "Qwen Code chat record", &r.off, func(line []byte) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		var rec chatRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return err
		}
		if rec.UUID == "" || r.seen[rec.UUID] {
			return nil
		}
		r.seen[rec.UUID] = true
		var b strings.Builder
		for _, p := range rec.Message.Parts {
			if !p.Thought {
				b.WriteString(p.Text)
			}
		}
		text := b.String()
		switch {
		case strings.TrimSpace(text) == "":
		case rec.Type == "assistant":
			replies = append(replies, text)
		case rec.Type == "user" && rec.Provenance != "system":
			r.prompts = append(r.prompts, text)
		}
		return nil
	})
	prompts, r.prompts = r.prompts, nil
	return replies, prompts, err
}

// FindChat returns the chat record of session id under home (Qwen Code's
// HOME): ~/.qwen/projects/*/chats/<id>.jsonl. It wraps fs.ErrNotExist when
// there is none yet.
func FindChat(home, id string) (string, error) {
	if id == "" || strings.ContainsAny(id, `/\*?[`) {
		return "", fmt.Errorf("find Qwen Code chat record: bad session id %q", id)
	}
	pattern := filepath.Join(home, ".qwen", "projects", "*", "chats", id+".jsonl")
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return "", fmt.Errorf("find Qwen Code chat record %s: %w", pattern, err)
	}
	if len(matches) == 0 {
		return "", fmt.Errorf("find Qwen Code chat record %s: %w", pattern, fs.ErrNotExist)
	}
	return matches[0], nil
}

// exact follows the chat record of the session: relay passes a new
// --session-id (a UUID v4, the only form Qwen Code takes), or follows the
// user's own from its end. With --resume or --prompt relay reads the
// screen, as for Gemini CLI, from whose command line Qwen Code's derives.
// When the session has BeforeToolCall handlers it also installs a
// PreToolUse hook (in the system-defaults overlay, beside relay's MCP
// server), even when the record cannot be followed.
func exact(l agents.Launch) (agents.Setup, error) {
	hooks, hookSettings, err := startHooks(l)
	if err != nil {
		l.Log.Warn("BeforeToolCall handlers will not see Qwen Code's tool calls", "err", err)
	}
	env, err := overlaySetup(l, hookSettings)
	if err != nil {
		var lost []string
		if l.MCP != nil {
			lost = append(lost, "relay's MCP tools")
		}
		if hooks != nil {
			lost = append(lost, "its PreToolUse hook (BeforeToolCall handlers will not see its tool calls)")
			hooks.srv.Close()
			hooks = nil
		}
		l.Log.Warn("relay's settings overlay for Qwen Code: "+strings.Join(lost, " and ")+" will be missing", "err", err)
	}
	id, add, err := sessionOf(l.Args)
	if err != nil {
		err = fmt.Errorf("chat record of Qwen Code is not followed: %w", err)
		switch {
		case hooks != nil: // the hook still, the screen for the text
			l.Log.Info("reading its screen only", "why", err)
			return agents.Setup{Env: env, Source: hooks}, nil
		case len(env) > 0: // the MCP server still, the screen for the text
			l.Log.Info("reading its screen only", "why", err)
			return agents.Setup{Env: env}, nil
		}
		return agents.Setup{}, err
	}
	own := len(add) == 0
	home := homeOf(l.Env)
	find := func(int) (agents.ReplyFile, error) {
		path, err := FindChat(home, id)
		if err != nil {
			return nil, err
		}
		var off int64
		if own { // the user's session may have history: from its end
			if fi, err := os.Stat(path); err == nil {
				off = fi.Size()
			}
		}
		return NewChatReaderAt(path, off), nil
	}
	var src agents.Source = agents.NewFollower("Qwen Code's chat record", find, l.Log)
	if hooks != nil {
		hooks.inner = src
		src = hooks
	}
	return agents.Setup{Args: add, Env: env, Source: src}, nil
}

// sessionOf is the session relay follows and the arguments to add.
func sessionOf(args []string) (id string, add []string, err error) {
	return gemini.Session(args, newUUID)
}

// diagnose says where relay reads Qwen Code's exact text.
func diagnose(_ context.Context, p agents.Probe) agents.Diagnosis {
	d := agents.Diagnosis{
		ExactText: "chat record (" + filepath.Join(homeOf(p.Env), ".qwen", "projects", "<folder>", "chats") + "), by the --session-id relay passes",
		MCP:       "registered for each session (an overlay of its system defaults, " + SystemDefaultsEnv + "), server relay; BeforeToolCall handlers by a PreToolUse hook there",
	}
	v, older, ok := agents.Older(p.Version, MinMajor, MinMinor)
	switch {
	case !ok:
		d.Problem = fmt.Sprintf("cannot read Qwen Code's version from %q", p.Version)
	case older:
		d.Problem = fmt.Sprintf("Qwen Code %s is older than %d.%d, the first release relay was checked with", v, MinMajor, MinMinor)
		d.Fix = "npm install -g " + Package + "@latest"
	}
	return d
}

// MinMajor and MinMinor are the oldest Qwen Code relay was checked with:
// its chat record, --session-id as a UUID, the system defaults overlay
// read wherever it is (settings version 4).
const (
	MinMajor = 0
	MinMinor = 24
)

// homeOf is HOME in env, else this user's home folder.
func homeOf(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "HOME="); ok && v != "" {
			return v
		}
	}
	home, _ := os.UserHomeDir()
	return home
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
