package relay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// minClaudeMajor is the oldest Claude Code whose hooks relay uses: 2.x has
// --settings, Stop's last_assistant_message and the transcript format.
const minClaudeMajor = 2

var claudeVersionRE = regexp.MustCompile(`(\d+)\.(\d+)\.(\d+)`)

// claudeHooksOK reports whether the Claude Code at command takes relay's
// hooks, and why not. It asks `command --version` once per binary (by path,
// size and time) and remembers the answer under RELAY_HOME/cache, so that
// starting Claude Code is not slowed down every time.
func (s *session) claudeHooksOK(command string) (bool, string) {
	path, err := exec.LookPath(command)
	if err != nil {
		return false, err.Error()
	}
	st, err := os.Stat(path)
	if err != nil {
		return false, err.Error()
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s|%d|%d", path, st.Size(), st.ModTime().UnixNano())))
	cache := filepath.Join(s.o.Home, "cache", "claude-version-"+hex.EncodeToString(sum[:8]))
	version := ""
	if b, err := os.ReadFile(cache); err == nil {
		version = strings.TrimSpace(string(b))
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, path, "--version").Output()
		if err != nil {
			return false, fmt.Sprintf("%s --version: %v", command, err)
		}
		version = strings.TrimSpace(string(out))
		if err := os.MkdirAll(filepath.Dir(cache), 0o700); err == nil {
			_ = os.WriteFile(cache, []byte(version+"\n"), 0o600)
		}
	}
	m := claudeVersionRE.FindStringSubmatch(version)
	if m == nil {
		return false, fmt.Sprintf("cannot read the version in %q", version)
	}
	if major, _ := strconv.Atoi(m[1]); major < minClaudeMajor {
		return false, fmt.Sprintf("Claude Code %s is older than %d.0", m[0], minClaudeMajor)
	}
	return true, ""
}
