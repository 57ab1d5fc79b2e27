package gemini

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/scanner"
)

// Cues are what Gemini CLI's screen and window title show about its state.
func Cues() scanner.Cues {
	return scanner.Cues{
		// A resumed session loads its history under a spinner with the
		// title already "Ready"; an Enter then is lost.
		Busy:          []string{"esc to cancel", "Resuming session"},
		BusyTitles:    []string{"Working…"},
		WaitingTitles: []string{"Action Required"},
		IdleTitles:    []string{"Ready ("},
		StartQuiet:    2 * time.Second,
		Prompt:        ">*!",
		Placeholders:  []string{"Type your message or @path/to/file"},
		// Under load its box showed 10 s and more before it read input.
		PasteMode: true,
	}
}

// pasteNewlineWindow is how long after Gemini CLI 0.61.0 reads a bracketed
// paste it takes an Enter for a newline. Its input prompt sets
// recentUnsafePasteTime when it handles the paste (outside the kitty
// keyboard protocol, which relay's terminal does not answer) and clears it
// in a 40 ms timer; the Enter handler sees the cleared value only after
// the re-render and effect that follow. Before that its key reader turns
// an Enter within 30 ms of the last key (the paste) into a newline
// (bufferFastReturn). Both count from when it reads the paste, which it
// draws just after: the box may show the paste inside the window.
const pasteNewlineWindow = 40 * time.Millisecond

// Settle is the pause between the input box showing a paste and its Enter
// for Gemini CLI. It counts from the draw, not the write: under load Gemini
// CLI read and drew a paste up to 350 ms after the write (the first one
// after start-up most), and an Enter right after the draw was a newline.
// The window is 40 ms after the draw on an idle machine, but its timer and
// re-render lag under load: with two busy loops (load average 7 to 9 on 2
// cores) an Enter 80 ms after the draw was a newline in 2 runs of 6, 120 ms
// in 1 of 4, 150 ms in none of 6 (TestGeminiEnterAfterPasteRealCLI,
// 12 rounds each). It was 300 ms from the write, most of the 300 ms a
// message may take from one CLI's reply to another's model (issue 22);
// relay's confirm presses Enter again 3 s later if one is still lost.
const Settle = 150 * time.Millisecond

// Profile is Gemini CLI's: the primer typed once it reads input, bracketed
// paste with `@ / !` neutralised, and its chat transcript as the exact path.
func Profile() agents.Profile {
	return agents.Profile{
		Name: "gemini", CLI: "Gemini CLI", Commands: []string{"gemini"},
		Cues: Cues(), Paste: true, Settle: Settle,
		TypePrimer: true, Model: true, ReadyTitle: "Ready", EscapeMentions: true,
		Exit:        func(string) string { return "/quit" },
		Detect:      func(head []byte) bool { return bytes.Contains(bytes.ToLower(head), []byte("gemini")) },
		Exact:       exact,
		Diagnose:    diagnose,
		Dialog:      Dialog,
		MCP:         true,
		HookCommand: true,
		Pin:         &agents.Pin{Package: "@google/gemini-cli", Version: "0.61.0", Folder: "gemini-cli", Bin: "gemini", VersionText: "0.61.0"},
		Offline:     offline(),
	}
}

// chat is Gemini CLI's chat transcript as an agents.ReplyFile: at a turn's
// end its last reply is final.
type chat struct{ r *TranscriptReader }

func (g chat) Read(idle bool) ([]string, []string, error) {
	var replies []string
	var err error
	if idle {
		replies, err = g.r.Stop()
	} else {
		replies, err = g.r.Next()
	}
	return replies, g.r.Prompts(), err
}

// exact follows the chat transcript of the session: relay passes a new
// --session-id, or follows the user's own (then the session may have
// history: it is read from its end). When the session has BeforeToolCall
// handlers it also installs Gemini CLI's BeforeTool and AfterTool hooks
// (in the system-defaults overlay, beside relay's MCP server), even when
// the transcript cannot be followed.
func exact(l agents.Launch) (agents.Setup, error) { return exactWith(l, SystemFileRead) }

// exactWith is exact with the check of whether Gemini CLI will read the
// overlay (SystemFileRead; tests, whose folders are below /tmp, pass
// their own).
func exactWith(l agents.Launch, read func(path string) error) (agents.Setup, error) {
	hooks, hookSettings, err := startHooks(l)
	if err != nil {
		l.Log.Warn("BeforeToolCall handlers will not see Gemini CLI's tool calls", "err", err)
	}
	id, add, follow := Session(l.Args, newUUID)
	if follow != nil {
		follow = fmt.Errorf("transcript of Gemini CLI is not followed: %w", follow)
		if hooks == nil {
			return agents.Setup{}, follow
		}
	}
	env, err := overlaySetup(l, hookSettings)
	if err == nil && len(env) > 0 {
		if err = read(lookup(env, SystemDefaultsEnv)); err != nil {
			err = fmt.Errorf("not read by Gemini CLI: %w", err)
		}
	}
	if err != nil {
		var lost []string
		if l.MCP != nil {
			lost = append(lost, "relay's MCP tools")
		}
		if hooks != nil {
			lost = append(lost, "its BeforeTool hook (BeforeToolCall handlers will not see its tool calls)")
			hooks.srv.Close()
			hooks = nil
		}
		l.Log.Warn("relay's settings overlay for Gemini CLI: "+strings.Join(lost, " and ")+" will be missing", "err", err)
	}
	if follow != nil {
		if hooks == nil {
			return agents.Setup{}, follow
		}
		l.Log.Warn("reading its screen only", "why", follow)
		return agents.Setup{Env: env, Source: hooks}, nil
	}
	own := len(add) == 0
	home := Home(l.Env)
	find := func(int) (agents.ReplyFile, error) {
		path, err := FindTranscript(home, id)
		if err != nil {
			return nil, err
		}
		if own {
			r, err := NewTranscriptReader(path)
			if err != nil {
				return nil, err
			}
			return chat{r}, nil
		}
		return chat{NewTranscriptReaderAt(path, 0)}, nil
	}
	var src agents.Source = agents.NewFollower("Gemini CLI's chat transcript", find, l.Log)
	if hooks != nil {
		hooks.inner = src
		src = hooks
	}
	return agents.Setup{Args: add, Env: env, Source: src}, nil
}

// diagnose says where relay reads Gemini CLI's exact text: its chat
// transcript, found by the --session-id relay passes, when this Gemini CLI
// has the flag.
func diagnose(ctx context.Context, p agents.Probe) agents.Diagnosis {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Path, "--help")
	cmd.Env = p.Env
	out, _ := cmd.CombinedOutput()
	if !bytes.Contains(out, []byte("--session-id")) {
		return agents.Diagnosis{ExactText: "screen (this Gemini CLI has no --session-id, so relay cannot find its transcript)"}
	}
	return agents.Diagnosis{ExactText: "chat transcript (" + filepath.Join(Home(p.Env), ".gemini", "tmp", "<project>", "chats") + "), by the --session-id relay passes",
		MCP: mcpDiagnosis(p.Home, OverlayRead)}
}

// mcpDiagnosis says whether relay's MCP server (and BeforeTool hook)
// reach Gemini CLI: relay writes them for each session into a
// system-defaults overlay below home, which Gemini CLI reads only when
// read (OverlayRead; tests pass their own) says so.
func mcpDiagnosis(home string, read func(home string) error) string {
	const registered = "registered for each session (a system-defaults overlay, " + SystemDefaultsEnv + "), server trusted"
	if home == "" {
		return registered + ", if Gemini CLI reads it (only when relay runs as root: docs/hooks.md)"
	}
	if err := read(home); err != nil {
		return "missing: relay writes them for each session into a system-defaults overlay (" + SystemDefaultsEnv +
			"), but it is " + err.Error() + "; relay's MCP tools and BeforeTool hook are then absent (docs/hooks.md)"
	}
	return registered
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
