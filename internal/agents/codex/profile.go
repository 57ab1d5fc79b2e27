package codex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/procfs"
	"github.com/relayhq/relay/internal/scanner"
)

// Cues are what Codex's screen shows about its state: its OSC 7501 state
// reports are exact; "esc to interrupt" is the fallback. While an approval
// dialog waits (0.169.0: "Would you like to run the following command?",
// OSC 7501 state=blocked) its window title says "Action Required".
func Cues() scanner.Cues {
	return scanner.Cues{
		Busy:          []string{"esc to interrupt"},
		StateOSC:      7501,
		Prompt:        "›",
		Placeholders:  []string{"Ask Codex to do anything"},
		WaitingTitles: []string{"Action Required"},
		Dialogs:       []string{"Would you like to run the following command?"},
	}
}

// Settle is the pause between a paste and its Enter for Codex. Relay
// presses Enter only once Codex's input box shows the paste, and Codex
// takes an Enter right after it (TestCodexEnterAfterPasteRealCLI): the
// pause is a small margin, not a wait. It was 200 ms, two thirds of a
// message's way from a Codex reply to another Codex's model (make bench).
const Settle = 20 * time.Millisecond

// Profile is Codex's: the primer typed at the first idle moment, bracketed
// paste, and its rollout file as the exact path.
func Profile() agents.Profile {
	return agents.Profile{
		Name: "codex", CLI: "Codex", Commands: []string{"codex"},
		Cues: Cues(), Paste: true, Settle: Settle,
		TypePrimer: true, Model: true,
		Exit: func(string) string { return "/quit" },
		Detect: func(head []byte) bool {
			return bytes.Contains(head, []byte("OpenAI Codex")) || bytes.Contains(head, []byte("7501;state="))
		},
		Exact:    exact,
		Diagnose: diagnose,
		Dialog:   Dialog,
		MCP:      true,
		Pin:      &agents.Pin{Package: "@openai/codex", Version: "0.169.0", Folder: "codex", Bin: "codex", VersionText: "codex-cli 0.169.0"},
		Offline:  offline(),
	}
}

// rollout is Codex's rollout file as an agents.ReplyFile.
type rollout struct{ r *RolloutReader }

func (c rollout) Read(bool) ([]string, []string, error) {
	rd, err := c.r.Next()
	return rd.Replies, rd.Prompts, err
}

// exact follows the rollout file of the Codex this session runs. The
// thread comes from the files Codex holds open (where the system lets relay
// see them: Linux); else the new session in the same folder is taken, if
// there is exactly one. A resumed session is read from its end at the time
// it is found.
func exact(l agents.Launch) (agents.Setup, error) {
	home := Home(l.Env)
	thread := ""
	find := func(pid int) (agents.ReplyFile, error) {
		if thread == "" {
			if files, err := procfs.OpenFiles(pid); err == nil {
				thread = Thread(home, files)
			}
		}
		var path string
		var err error
		if thread != "" {
			path, err = FindRollout(home, thread)
		} else {
			path, err = FindNewRollout(home, l.Dir, l.Started)
			if errors.Is(err, ErrAmbiguous) {
				// Keep looking: the thread may still show among the open files.
				err = fmt.Errorf("%w (%w)", fs.ErrNotExist, err)
			}
		}
		if err != nil {
			return nil, err
		}
		from := int64(0)
		if started, err := SessionStarted(path); err == nil && started.Before(l.Started.Add(-time.Second)) {
			if fi, err := os.Stat(path); err == nil {
				from = fi.Size()
			}
		}
		return rollout{NewRolloutReader(path, from)}, nil
	}
	return agents.Setup{Args: MCPArgs(l.MCP), Source: agents.NewFollower("Codex's rollout file", find, l.Log)}, nil
}

// diagnose says where relay reads Codex's exact text: its rollout files
// under CODEX_HOME (else ~/.codex), which must be a folder Codex can write.
func diagnose(_ context.Context, p agents.Probe) agents.Diagnosis {
	home := Home(p.Env)
	if fi, err := os.Stat(home); err == nil && !fi.IsDir() {
		return agents.Diagnosis{ExactText: "screen (" + home + " is not a folder, so Codex keeps no rollout)"}
	}
	return agents.Diagnosis{ExactText: "rollout file (" + filepath.Join(home, "sessions") + "), thread from Codex's open files",
		MCP: "registered for each session (-c mcp_servers.relay.…), tools in the namespace mcp__relay"}
}
