package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/agents/internal/jsonl"
	"github.com/relayhq/relay/internal/hookrpc"
)

// HookEvents are the Claude Code hook events relay listens to, in
// the order they happen in a session. PermissionRequest runs as a tool
// permission dialog opens (an empty answer leaves the choice to the
// human, and a decision it prints answers the dialog while it is up);
// Notification's permission_prompt follows only about 6 s later (Claude
// Code 2.1.328), so PermissionRequest is the cue that the agent waits on
// the human.
func HookEvents() []string {
	return []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "PermissionRequest", "Notification", "Stop", "SessionEnd"}
}

// hookStartMargin is what Claude Code's own time limit for each of relay's
// hooks allows above `relay hook`'s (hookrpc.Limit, which counts from the
// process's start: 5 s for Stop, 2 s for most others), so that Claude Code
// never kills a hook that is still starting or printing its answer. On a
// loaded machine the race-built relay took 7.7 s to start a SessionStart
// hook; killed, a hook is late or lost, and a Stop's hand-over with it.
const hookStartMargin = 25 * time.Second

// hookTimeout is Claude Code's time limit for the hook of ev, in seconds.
func hookTimeout(ev string) int {
	return int((hookrpc.Limit(ev) + hookStartMargin + time.Second - 1) / time.Second)
}

// Settings returns the JSON for `claude --settings JSON`: for this
// session only, each event of HookEvents runs `HOOKCOMMAND hook
// EVENT`, where hookCommand is the path of the relay binary. Claude Code
// runs hook commands through a shell, so the path is single-quoted.
// Claude Code merges these hooks with the user's own; no settings file is
// read or written.
//
// extra names hook events to add to HookEvents (PreToolUse, when the
// session has BeforeToolCall handlers).
func Settings(hookCommand string, extra ...string) (string, error) {
	return SettingsAllowing(hookCommand, nil, extra...)
}

// SettingsAllowing is Settings with permission rules that let the listed
// tools run without asking the human (permissions.allow; Claude Code
// merges them with the user's own rules): relay's MCP tools.
func SettingsAllowing(hookCommand string, allow []string, extra ...string) (string, error) {
	if hookCommand == "" {
		return "", fmt.Errorf("claude settings: the relay binary's path is empty")
	}
	if strings.ContainsAny(hookCommand, "\x00\n\r") {
		return "", fmt.Errorf("claude settings: relay binary path %q holds a NUL or line break", hookCommand)
	}
	type handler struct {
		Type    string `json:"type"`
		Command string `json:"command"`
		Timeout int    `json:"timeout"`
	}
	type group struct {
		Hooks []handler `json:"hooks"`
	}
	hooks := map[string][]group{}
	for _, ev := range append(HookEvents(), extra...) {
		hooks[ev] = []group{{Hooks: []handler{{Type: "command", Command: ShellQuote(hookCommand) + " hook " + ev, Timeout: hookTimeout(ev)}}}}
	}
	settings := map[string]any{"hooks": hooks}
	if len(allow) > 0 {
		settings["permissions"] = map[string]any{"allow": allow}
	}
	b, err := json.Marshal(settings)
	if err != nil {
		return "", fmt.Errorf("claude settings: %w", err)
	}
	return string(b), nil
}

// ShellQuote quotes s as one word for a POSIX shell: inside single quotes,
// where nothing is special but the single quote itself.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Hook is the JSON Claude Code writes on a hook's stdin. Every event
// carries the first five fields; the others belong to some events only
// (the comment says which) and are empty elsewhere.
type Hook struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"` // the session's JSONL transcript (see TurnTexts)
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	PermissionMode string `json:"permission_mode"` // e.g. "default", "auto"

	// SessionStart: why the session started ("startup", "resume",
	// "clear", "compact") and its model.
	Source string `json:"source"`
	Model  string `json:"model"`

	// UserPromptSubmit: the exact text that reaches the model. PromptID
	// names the turn the prompt starts (also on the turn's later events).
	Prompt   string `json:"prompt"`
	PromptID string `json:"prompt_id"`

	// PostToolUse (all four) and PermissionRequest (name and input): the
	// tool call and its result, as Claude Code shows them.
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolResponse json.RawMessage `json:"tool_response"`
	ToolUseID    string          `json:"tool_use_id"`

	// Notification: the text shown to the human and its kind (e.g.
	// "permission_prompt", "idle_prompt").
	Message          string `json:"message"`
	NotificationType string `json:"notification_type"`

	// Stop: the exact markdown of the last assistant message, and whether
	// Claude Code is already continuing because a Stop hook blocked.
	LastAssistantMessage string `json:"last_assistant_message"`
	StopHookActive       bool   `json:"stop_hook_active"`

	// SessionEnd: why the session ended (e.g. "prompt_input_exit",
	// "clear", "logout", "other").
	Reason string `json:"reason"`
}

// ParseHook reads a hook's stdin JSON. Unknown fields are ignored:
// newer Claude Code versions add some.
func ParseHook(data []byte) (Hook, error) {
	var h Hook
	if err := json.Unmarshal(data, &h); err != nil {
		return Hook{}, fmt.Errorf("parse Claude Code hook payload: %w", err)
	}
	if h.HookEventName == "" {
		return Hook{}, fmt.Errorf("parse Claude Code hook payload: no hook_event_name")
	}
	return h, nil
}

// StopBlockCap is how many consecutive Stop blocks Claude Code
// 2.1.328 accepts: at the ninth it prints "A hook blocked the turn from
// ending 9 consecutive times—overriding and ending turn" and drops that
// block's reason (it never reaches the model), unless the environment
// variable CLAUDE_CODE_STOP_HOOK_BLOCK_CAP says otherwise. A wrapper
// should block at most StopBlockCap-1 times in a row (count the
// Stops with stop_hook_active) and type what is left.
const StopBlockCap = 9

// StopBlock is a Stop hook's answer that keeps Claude working: reason
// becomes its next input, without touching the input box. Claude Code then
// sets stop_hook_active on the next Stop and caps consecutive blocks
// (StopBlockCap). The human sees each block as "Stop hook reported a
// problem" followed by reason.
func StopBlock(reason string) string {
	b, _ := json.Marshal(struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}{"block", reason})
	return string(b)
}

// PreToolUseAnswer is a PreToolUse hook's answer for v: a denial whose
// reason reaches the model, context for the model beside the call, or ""
// (the call goes on as Claude Code decides).
func PreToolUseAnswer(v agents.ToolVerdict) string {
	if !v.Block && v.Context == "" {
		return ""
	}
	type specific struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision,omitempty"`
		PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
		AdditionalContext        string `json:"additionalContext,omitempty"`
	}
	sp := specific{HookEventName: "PreToolUse", AdditionalContext: v.Context}
	if v.Block {
		sp.PermissionDecision = "deny"
		sp.PermissionDecisionReason = v.Reason
		if sp.PermissionDecisionReason == "" {
			sp.PermissionDecisionReason = "refused by a BeforeToolCall hook"
		}
	}
	b, _ := json.Marshal(struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{sp})
	return string(b)
}

// AdditionalContext is a hook's answer that adds text to what the model
// reads next, for the events that accept it: UserPromptSubmit (beside the
// prompt), PostToolUse (beside the tool's result) and SessionStart.
func AdditionalContext(event, text string) string {
	type specific struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	}
	b, _ := json.Marshal(struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{specific{event, text}})
	return string(b)
}

// transcriptWindow is how much of a transcript's end TurnTexts reads
// first; it doubles until the turn's start is inside.
const transcriptWindow = 1 << 20

// TurnTexts returns the exact text of every assistant text block of the
// current turn of a Claude Code transcript (the session's JSONL file,
// Hook.TranscriptPath), in order: so a command written before a tool
// call is not missed.
//
// The turn starts after the last user input: a prompt, a message queued
// while Claude worked, or the reason of a Stop hook that blocked (recorded
// as a meta user message "Stop hook feedback:\n…"). Tool results are not
// input. So after a block, only the texts written since are returned.
//
// Claude Code writes each content block of an assistant message as its
// own record, and writes records late and not always in order: at Stop,
// the turn's last message is often not in the file yet (StopTexts adds it
// from the hook's payload), and after a Stop block even the block's reason
// may still be missing, so that the turn seems to start earlier. A wrapper
// that must fire each command once reads with a TranscriptReader instead. Records of other types (attachments, system records,
// API request logs, and any unknown one) are skipped, and so is an
// unterminated last line (a record being written). A malformed complete
// line is an error naming it.
func TurnTexts(transcriptPath string) ([]string, error) {
	f, err := os.Open(transcriptPath)
	if err != nil {
		return nil, fmt.Errorf("read Claude Code transcript: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read Claude Code transcript: %w", err)
	}
	size := fi.Size()
	for window := int64(transcriptWindow); ; window *= 2 {
		start := max(size-window, 0)
		buf := make([]byte, size-start)
		if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read Claude Code transcript %s: %w", transcriptPath, err)
		}
		texts, found, err := turnTexts(buf, start > 0)
		if err != nil {
			return nil, fmt.Errorf("read Claude Code transcript %s: %w", transcriptPath, err)
		}
		if found || start == 0 {
			return texts, nil
		}
	}
}

// turnTexts reads the records in buf and returns the assistant texts of
// the turn that starts at the last user input, and whether it found that
// input. cut says buf starts inside the file, so its first line may be
// partial.
//
// The file's order is not the conversation's: Claude Code may write a
// turn's last assistant message after the Stop hook's block reason that
// follows it. So the turn is read from the records' parentUuid links: a
// text belongs to the turn when its chain of parents reaches the turn's
// input before any other input, and texts are ordered by their distance
// from that input.
func turnTexts(buf []byte, cut bool) ([]string, bool, error) {
	lines := bytes.Split(buf, []byte("\n"))
	// The last element is what follows the last newline: empty, or a
	// record still being written.
	lines = lines[:len(lines)-1]
	if cut && len(lines) > 0 {
		lines = lines[1:]
	}
	type node struct {
		parent string
		input  bool
		texts  []string
	}
	nodes := map[string]*node{}
	var order []string // uuids of assistant records with text, in file order
	boundary := ""
	for i, line := range lines {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || !bytes.Contains(line, []byte(`"uuid"`)) {
			continue
		}
		var rec transcriptRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, false, fmt.Errorf("line %d from the end: %w", len(lines)-i, err)
		}
		if rec.UUID == "" || rec.IsSidechain {
			continue
		}
		n := &node{parent: rec.ParentUUID}
		switch rec.Type {
		case "assistant":
			blocks, _ := rec.Message.blocks()
			for _, b := range blocks {
				if b.Type == "text" {
					n.texts = append(n.texts, b.Text)
				}
			}
			if len(n.texts) > 0 {
				order = append(order, rec.UUID)
			}
		case "user":
			if _, input := rec.Message.blocks(); input {
				n.input = true
				boundary = rec.UUID
			}
		}
		nodes[rec.UUID] = n
	}
	if boundary == "" && cut {
		return nil, false, nil
	}
	// dist is each record's distance from the boundary along its parents,
	// or -1 when its chain meets another input or leaves buf first. With
	// no input in the whole file, the boundary is the root ("").
	dist := map[string]int{boundary: 0}
	distance := func(id string) int {
		var path []string
		d := -1
		for {
			if known, ok := dist[id]; ok {
				d = known
				break
			}
			n, ok := nodes[id]
			if !ok || n.input {
				break
			}
			path = append(path, id)
			id = n.parent
		}
		for i := len(path) - 1; i >= 0; i-- {
			if d >= 0 {
				d++
			}
			dist[path[i]] = d
		}
		return d
	}
	type text struct {
		dist, order int
		texts       []string
	}
	var turn []text
	for i, id := range order {
		if d := distance(id); d > 0 {
			turn = append(turn, text{d, i, nodes[id].texts})
		}
	}
	slices.SortStableFunc(turn, func(a, b text) int { return a.dist - b.dist })
	var texts []string
	for _, t := range turn {
		texts = append(texts, t.texts...)
	}
	return texts, boundary != "", nil
}

// transcriptRecord is the part of a transcript line TurnTexts reads.
type transcriptRecord struct {
	Type        string            `json:"type"`
	UUID        string            `json:"uuid"`
	ParentUUID  string            `json:"parentUuid"`
	IsSidechain bool              `json:"isSidechain"`
	Message     transcriptMessage `json:"message"`
}

// transcriptMessage is a record's API message.
type transcriptMessage struct {
	Content json.RawMessage `json:"content"`
}

// contentBlock is one block of a message's content.
type contentBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
	ID   string `json:"id"` // a tool_use block's id
}

// blocks returns the content's blocks (a plain string is one text block),
// and whether it holds input: anything but tool results.
func (m transcriptMessage) blocks() ([]contentBlock, bool) {
	c := bytes.TrimSpace(m.Content)
	if len(c) == 0 {
		return nil, false
	}
	if c[0] == '"' {
		var s string
		if json.Unmarshal(c, &s) != nil {
			return nil, false
		}
		return []contentBlock{{Type: "text", Text: s}}, true
	}
	var blocks []contentBlock
	if json.Unmarshal(c, &blocks) != nil {
		return nil, false
	}
	input := false
	for _, b := range blocks {
		if b.Type != "tool_result" {
			input = true
		}
	}
	return blocks, input
}

// StopTexts is TurnTexts for a Stop hook: the turn's texts from the
// transcript followed by h.LastAssistantMessage, which Claude Code writes
// to the transcript only after its Stop hooks ran (it is not added again
// when the transcript already ends with it). A transcript not written yet
// (Claude Code creates it in the background, after a first turn's Stop
// hooks on a loaded machine) holds nothing of the turn: the last message
// alone is returned. When the transcript cannot be read, it returns the
// last message alone with the error.
func StopTexts(h Hook) ([]string, error) {
	texts, err := TurnTexts(h.TranscriptPath)
	if err != nil {
		texts = nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if h.LastAssistantMessage != "" && (len(texts) == 0 || texts[len(texts)-1] != h.LastAssistantMessage) {
		texts = append(texts, h.LastAssistantMessage)
	}
	return texts, err
}

// maxPending bounds the texts a TranscriptReader waits to see written.
const maxPending = 16

// TranscriptReader reads a Claude Code transcript as it grows and returns
// each assistant text once: the way to fire every command of a session
// exactly once, whatever order Claude Code writes its records in. It is
// not safe for concurrent use.
type TranscriptReader struct {
	path    string
	off     int64    // where the next unread line starts
	pending []string // texts returned by Stop before their record was written
	// said are the texts Next returned in this turn (Turn starts one), so
	// that a Stop hook arriving after they were read does not return its
	// last message again.
	said []string
	// awaited are the tool calls PostToolUse reported whose records were
	// not read yet: the texts before them are not in the file yet either.
	awaited map[string]bool
}

// NewTranscriptReader returns a reader that starts at the transcript's
// current end (its start when the file does not exist yet, as at a new
// session's SessionStart), so that a resumed session's old texts are not
// returned again. Create it at SessionStart.
func NewTranscriptReader(transcriptPath string) (*TranscriptReader, error) {
	r := &TranscriptReader{path: transcriptPath}
	fi, err := os.Stat(transcriptPath)
	switch {
	case err == nil:
		r.off = fi.Size()
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("open Claude Code transcript: %w", err)
	}
	return r, nil
}

// Next returns the assistant texts written since the last call, in the
// file's order, less those Stop already returned. An unterminated last
// line is left for the next call. A malformed line is skipped and reported
// in the error, with the texts read around it.
func (r *TranscriptReader) Next() ([]string, error) {
	var texts []string
	err := jsonl.ReadNewLines(r.path, "Claude Code transcript", &r.off, func(line []byte) error {
		if !bytes.Contains(line, []byte(`"assistant"`)) {
			return nil
		}
		var rec transcriptRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return err
		}
		if rec.Type != "assistant" || rec.IsSidechain {
			return nil
		}
		blocks, _ := rec.Message.blocks()
		for _, b := range blocks {
			if b.Type == "tool_use" {
				delete(r.awaited, b.ID)
			}
			if b.Type == "text" && !r.consume(b.Text) {
				texts = append(texts, b.Text)
				r.said = append(r.said, b.Text)
				if len(r.said) > maxPending {
					r.said = r.said[1:]
				}
			}
		}
		return nil
	})
	return texts, err
}

// Turn tells the reader that a new turn began (a prompt reached the
// model): texts read before it no longer stand for the turn's last message.
func (r *TranscriptReader) Turn() { r.said = r.said[:0] }

// Await tells the reader that Claude Code ran tool call id (PostToolUse):
// its record, and the texts written before it in the turn, belong before
// the turn's last message. Stop waits a moment for them when Claude Code
// has not written them yet.
func (r *TranscriptReader) Await(id string) {
	if id == "" {
		return
	}
	if r.awaited == nil {
		r.awaited = map[string]bool{}
	}
	r.awaited[id] = true
}

// awaitWait is the longest Stop waits for the records of tool calls that
// ran: Claude Code writes its transcript in the background, and under load
// a turn's records trailed its Stop hook.
const awaitWait = 2 * time.Second

// awaitPoll is how often Stop looks for them meanwhile.
const awaitPoll = 10 * time.Millisecond

// consume reports whether text is (the first part of) a text that Stop
// already returned, and strikes it off.
func (r *TranscriptReader) consume(text string) bool {
	for i, p := range r.pending {
		if !strings.HasPrefix(p, text) {
			continue
		}
		if rest := strings.TrimLeft(p[len(text):], "\n"); rest != "" {
			r.pending[i] = rest
		} else {
			r.pending = slices.Delete(r.pending, i, i+1)
		}
		return true
	}
	return false
}

// Stop is Next for a Stop hook: the texts written since the last call,
// then h.LastAssistantMessage unless a read of this turn returned it
// (a Stop that comes late, after its records were read). Claude Code writes
// that last message to the transcript only after its Stop hooks, so the
// reader remembers it and does not return it again when it is written.
//
// When a tool call of the turn (Await) is not in the transcript yet, Stop
// first waits for it, up to awaitWait, so that the texts written before the
// call come before the last message, in the order the model wrote them.
func (r *TranscriptReader) Stop(h Hook) ([]string, error) {
	texts, err := r.Next()
	for deadline := time.Now().Add(awaitWait); len(r.awaited) > 0 && err == nil && time.Now().Before(deadline); {
		time.Sleep(awaitPoll)
		var more []string
		more, err = r.Next()
		texts = append(texts, more...)
	}
	clear(r.awaited) // found, or given up on: not awaited at the next Stop
	last := h.LastAssistantMessage
	if last != "" && !slices.Contains(r.said, last) {
		texts = append(texts, last)
		r.pending = append(r.pending, last)
		if len(r.pending) > maxPending {
			r.pending = r.pending[1:]
		}
	}
	return texts, err
}
