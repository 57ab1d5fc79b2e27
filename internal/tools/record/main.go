// Command record makes the scanner's terminal recordings: it drives a real
// agent CLI (any of the registry with a Pin and an Offline, the pinned
// versions installed by .ci/install-agents) in a pseudo-terminal, as its
// profile's Offline says, against a mock model server
// that streams a scripted reply, and saves the exact byte stream the CLI
// wrote (NAME.raw, from the CLI's start until its reply is complete and the
// screen is still) with what a scanner must find in it (NAME.json).
//
// The recordings are defined in specs.go, so that each one can be made again:
//
//	scripts/record                 # every recording
//	scripts/record -list           # their names
//	scripts/record -only claude/long-80x24,codex/single-100x30
//	scripts/record -out /tmp/rec   # somewhere else than testdata/recordings
//
// After each recording it prints the final screen as tmux shows it and
// whether each command's first words are on it, for the person recording to
// check before committing.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("record", flag.ContinueOnError)
	list := fs.Bool("list", false, "list the recordings and exit")
	only := fs.String("only", "", "comma-separated CLI/NAME recordings to make (default: all)")
	dir := fs.String("out", "testdata/recordings", "folder holding the per-CLI recording folders")
	quiet := fs.Bool("q", false, "do not print the final screens")
	if err := fs.Parse(args); err != nil {
		return err
	}
	want := map[string]bool{}
	for _, n := range strings.Split(*only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	specs := allSpecs()
	filter := len(want) > 0
	for _, s := range specs {
		id := s.CLI + "/" + s.Name
		if *list {
			fmt.Fprintf(out, "%-32s %dx%d  %s\n", id, s.Cols, s.Rows, folderOf(s.CLI))
			continue
		}
		if filter && !want[id] {
			continue
		}
		delete(want, id)
		fmt.Fprintf(out, "== %s (%dx%d)\n", id, s.Cols, s.Rows)
		screen, err := record(s, filepath.Join(*dir, folderOf(s.CLI)))
		if err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
		if !*quiet {
			fmt.Fprintln(out, screen)
		}
		raw, err := os.ReadFile(filepath.Join(*dir, folderOf(s.CLI), s.Name+".raw"))
		if err != nil {
			return err
		}
		report, err := visibility(raw, s)
		if err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
		fmt.Fprint(out, report)
	}
	for id := range want {
		return fmt.Errorf("no recording %q (see -list)", id)
	}
	return nil
}

// folderOf names the recordings folder of a CLI: its pin's folder, with
// the suffix folderSuffix gives it.
func folderOf(cli string) string {
	pin, err := agenttest.Pin(cli)
	if err != nil {
		return cli
	}
	return pin.Dir() + folderSuffix(cli)
}

// fixture is the NAME.json written beside NAME.raw, in the shape of the
// Claude Code recordings in testdata/recordings/claude-code-2.1.328 (whose
// "claude_code" key holds the version that "cli" and "version" hold here).
type fixture struct {
	Cols     int       `json:"cols"`
	Rows     int       `json:"rows"`
	Prompts  []string  `json:"prompts"`
	CLI      string    `json:"cli,omitempty"`
	Version  string    `json:"version,omitempty"`
	Renderer string    `json:"renderer,omitempty"`
	Must     []command `json:"must"`
	MustNot  []command `json:"must_not"`
	Either   []command `json:"either"`
	Note     string    `json:"note,omitempty"`
	// AssistantText is what the model answered to every prompt; when the
	// replies differ, AssistantTexts holds one per model turn and
	// AssistantText the first.
	AssistantText  string   `json:"assistant_text"`
	AssistantTexts []string `json:"assistant_texts,omitempty"`
	// ToolUse is the tool call that followed the first reply's text, if any;
	// the next model turn answered the tool's result.
	ToolUse *mockmodel.ToolUse `json:"tool_use,omitempty"`
	// Args are the extra command-line arguments the CLI was started with.
	Args []string `json:"args,omitempty"`
}

// command is one expected (or forbidden) command.
type command struct {
	NS     string `json:"ns"`
	Target string `json:"target"`
	Body   string `json:"body,omitempty"`
	Why    string `json:"why,omitempty"`
}

// record makes one recording into dir and returns the final screen.
func record(s spec, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	state, err := os.MkdirTemp("", "relay-record-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(state)
	// A short, fixed project path, as a user's would be; it shows on screen.
	work := filepath.Join(os.TempDir(), "relay-rec", "alpha01")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return "", err
	}
	bin, err := agenttest.BinaryPath(s.CLI)
	if err != nil {
		return "", err
	}
	var replies []mockmodel.Reply
	for i, text := range s.Replies {
		r := mockmodel.Reply{Text: text, Chunk: 24, ChunkDelay: 15 * time.Millisecond}
		if i == 0 {
			r.ToolUse = s.Tool
		}
		replies = append(replies, r)
	}
	opts := mockmodel.Options{Script: mockmodel.Queue(replies...)}
	// Every CLI the same way, through its profile's Offline (the registry).
	off, err := agenttest.OfflineOf(s.CLI)
	if err != nil {
		return "", err
	}
	m, err := mockmodel.Start(off.API, opts)
	if err != nil {
		return "", err
	}
	defer m.Close()
	log := m.Log
	pin, err := agenttest.Pin(s.CLI)
	if err != nil {
		return "", err
	}
	fx := fixture{Cols: s.Cols, Rows: s.Rows, Prompts: s.Prompts, Must: nonNil(s.Must),
		MustNot: nonNil(s.MustNot), Either: nonNil(s.Either), Note: s.Note,
		CLI: s.CLI, Version: pin.Version, Renderer: s.Renderer}
	setup := off.Setup
	if s.Setup != nil {
		setup = s.Setup
	}
	cmd, err := agenttest.OfflineCmdWith(state, s.CLI, agenttest.OfflineOptions{Model: m.URL, WorkDir: work, Binary: bin,
		Cols: s.Cols, Rows: s.Rows, ExtraArgs: s.Args}, setup)
	if err != nil {
		return "", err
	}
	// A human's pace: a pause between the paste and its Enter, and a
	// second Enter after half of submitWithin when the model got nothing
	// (OpenCode asks the model 10 to 30 s after the Enter at a load of 20).
	const (
		settle       = 300 * time.Millisecond
		submitWithin = 90 * time.Second
	)
	fx.AssistantText = s.Replies[0]
	fx.ToolUse = s.Tool
	fx.Args = s.Args
	for _, r := range s.Replies[1:] {
		if r != s.Replies[0] {
			fx.AssistantTexts = s.Replies
			break
		}
	}
	term, err := agenttest.StartCmd(cmd)
	if err != nil {
		return "", err
	}
	defer term.Close()
	// OpenCode took 60 s to draw its home screen at a load of 20.
	if _, err := term.WaitReady(150*time.Second, off.Ready); err != nil {
		return "", fmt.Errorf("waiting for the CLI to start: %w", err)
	}
	for i, p := range s.Prompts {
		turns := len(log.Turns())
		want := turns + 1
		if i == len(s.Prompts)-1 {
			want = len(s.Replies) // a tool call adds a turn
		}
		if _, err := term.SubmitConfirm(p, settle, submitWithin, func() bool { return log.Count(p) > 0 }); err != nil {
			screen, _ := agenttest.RenderScreen(term.Raw(), s.Cols, s.Rows)
			return "", fmt.Errorf("%w; screen:\n%s", err, screen)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		_, err := log.WaitReplied(ctx, want)
		cancel()
		if err != nil {
			screen, _ := agenttest.RenderScreen(term.Raw(), s.Cols, s.Rows)
			return "", fmt.Errorf("prompt %d: %w; screen:\n%s", i+1, err, screen)
		}
		if _, err := term.WaitReady(60*time.Second, off.Ready); err != nil {
			return "", fmt.Errorf("prompt %d: waiting for the reply to finish: %w", i+1, err)
		}
	}
	if err := term.WaitQuiet(2*time.Second, 30*time.Second); err != nil {
		return "", err
	}
	raw := term.Raw()
	if n := len(log.Turns()); n != len(s.Replies) {
		return "", fmt.Errorf("the model saw %d turns, want %d", n, len(s.Replies))
	}
	screen, err := agenttest.RenderScreen(raw, s.Cols, s.Rows)
	if err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(fx, "", " ")
	if err != nil {
		return "", err
	}
	base := filepath.Join(dir, s.Name)
	if err := os.WriteFile(base+".raw", raw, 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(base+".json", append(b, '\n'), 0o644); err != nil {
		return "", errors.Join(err, os.Remove(base+".raw"))
	}
	return screen, nil
}

// nonNil keeps empty lists as [] in the JSON, as in the existing fixtures.
func nonNil(c []command) []command {
	if c == nil {
		return []command{}
	}
	return c
}

// frames is how many moments of a recording visibility samples.
const frames = 80

// visibility replays raw at evenly spaced moments and reports, for each
// command a scanner must find, in how many of them it was fully on screen
// and whether it is on the final screen.
func visibility(raw []byte, s spec) (string, error) {
	var cuts []int
	for i := 1; i <= frames; i++ {
		cuts = append(cuts, len(raw)*i/frames)
	}
	screens, err := agenttest.RenderFrames(raw, s.Cols, s.Rows, cuts)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range s.Must {
		head := "@" + c.NS + ":" + c.Target
		words := strings.Fields(c.Body)
		if len(words) > 4 {
			words = words[:4]
		}
		first := strings.Join(words, " ")
		seen := 0
		for _, sc := range screens {
			if strings.Contains(sc, head) && strings.Contains(sc, first) {
				seen++
			}
		}
		final := "not on the final screen"
		if last := screens[len(screens)-1]; strings.Contains(last, head) && strings.Contains(last, first) {
			final = "on the final screen"
		}
		fmt.Fprintf(&b, "   %s %q: on screen in %d of %d sampled moments, %s\n", head, first, seen, frames, final)
	}
	return b.String(), nil
}
