package relay

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/relayhq/relay/agents"
	"github.com/relayhq/relay/internal/procfs"
	"github.com/relayhq/relay/patterns"
)

// codexFile is Codex's rollout file as a replyFile.
type codexFile struct{ r *agents.CodexRolloutReader }

func (c codexFile) read(bool) ([]string, []string, error) {
	rd, err := c.r.Next()
	return rd.Replies, rd.Prompts, err
}

// geminiFile is Gemini CLI's chat transcript as a replyFile: at a turn's
// end its last reply is final.
type geminiFile struct {
	r *agents.GeminiTranscriptReader
}

func (g geminiFile) read(idle bool) ([]string, []string, error) {
	var replies []string
	var err error
	if idle {
		replies, err = g.r.Stop()
	} else {
		replies, err = g.r.Next()
	}
	return replies, g.r.Prompts(), err
}

// workDir is the child's working folder, symbolic links resolved (as the
// CLIs record it).
func (s *session) workDir() string {
	dir := s.o.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir
}

// codexFollower follows the rollout file of the Codex this session runs
// with the environment env, started at since. The thread comes from the
// files Codex holds open (Linux); else the new session in the same folder
// is taken, if there is exactly one. A resumed session is read from its
// end at the time it is found.
func (s *session) codexFollower(env []string, since time.Time) *replyFollower {
	home := agents.CodexHome(env)
	cwd := s.workDir()
	thread := ""
	find := func() (replyFile, error) {
		if thread == "" {
			if files, err := procfs.OpenFiles(s.ws.Pid()); err == nil {
				thread = agents.CodexThread(home, files)
			}
		}
		var path string
		var err error
		if thread != "" {
			path, err = agents.FindCodexRollout(home, thread)
		} else {
			path, err = agents.FindNewCodexRollout(home, cwd, since)
			if errors.Is(err, agents.ErrCodexAmbiguous) {
				// Keep looking: the thread may still show among the open files.
				err = fmt.Errorf("%w (%w)", fs.ErrNotExist, err)
			}
		}
		if err != nil {
			return nil, err
		}
		from := int64(0)
		if started, err := agents.CodexSessionStarted(path); err == nil && started.Before(since.Add(-time.Second)) {
			if fi, err := os.Stat(path); err == nil {
				from = fi.Size()
			}
		}
		return codexFile{agents.NewCodexRolloutReader(path, from)}, nil
	}
	return s.newFollower("Codex's rollout file", find)
}

// geminiFollower follows the chat transcript of the Gemini CLI session id,
// run with the environment env. own says the id is the user's (the session
// may have history: read from its end), not one relay made up.
func (s *session) geminiFollower(env []string, id string, own bool) *replyFollower {
	home := agents.GeminiHome(env)
	find := func() (replyFile, error) {
		path, err := agents.FindGeminiTranscript(home, id)
		if err != nil {
			return nil, err
		}
		if own {
			r, err := agents.NewGeminiTranscriptReader(path)
			if err != nil {
				return nil, err
			}
			return geminiFile{r}, nil
		}
		return geminiFile{agents.NewGeminiTranscriptReaderAt(path, 0)}, nil
	}
	return s.newFollower("Gemini CLI's chat transcript", find)
}

// newFollower wires a replyFollower to the session: exact replies fire
// their commands and Output events, prompts confirm deliveries, held
// screen commands go to the handlers when the file is not found.
func (s *session) newFollower(what string, find func() (replyFile, error)) *replyFollower {
	f := newReplyFollower(what, find, s.log)
	f.fire = func(replies, prompts []string) {
		for _, p := range prompts {
			s.prompted(p)
		}
		for _, r := range replies {
			s.fireText(r)
			s.outputLines(context.Background(), strings.Split(r, "\n"))
		}
	}
	f.flush = func(cmds []patterns.Command) {
		for _, c := range cmds {
			s.cmds.put(c)
		}
	}
	return f
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
