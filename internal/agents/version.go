package agents

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/relayhq/relay/internal/lazyre"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// versionTimeout bounds a CLI's --version.
const versionTimeout = 10 * time.Second

// Version runs `path --version` with the environment env (nil: this
// process's) and returns the first line it printed.
func Version(ctx context.Context, path string, env []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = env
	cmd.WaitDelay = time.Second // a child holding the pipes open must not hang us
	out, err := cmd.CombinedOutput()
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	first = strings.TrimSpace(first)
	switch {
	case ctx.Err() != nil:
		return "", fmt.Errorf("%s --version did not answer within %v", path, versionTimeout)
	case err != nil:
		return "", fmt.Errorf("%s --version failed: %v: %.200s", path, err, first)
	case first == "":
		return "", fmt.Errorf("%s --version printed nothing", path)
	}
	return first, nil
}

// CachedVersion is Version remembered under home/cache, by the binary's
// path, size and time, so that starting an agent does not wait for its
// --version every time.
func CachedVersion(ctx context.Context, home, path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s|%d|%d", path, st.Size(), st.ModTime().UnixNano()))
	cache := filepath.Join(home, "cache", "version-"+hex.EncodeToString(sum[:8]))
	if b, err := os.ReadFile(cache); err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	v, err := Version(ctx, path, nil)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(cache), 0o700); err == nil {
		_ = os.WriteFile(cache, []byte(v+"\n"), 0o600)
	}
	return v, nil
}

var semverRE = lazyre.New(`(\d+)\.(\d+)\.(\d+)`)

// Major returns the major number of the first x.y.z in a version line, and
// that x.y.z; false when there is none.
func Major(version string) (int, string, bool) {
	m := semverRE().FindStringSubmatch(version)
	if m == nil {
		return 0, "", false
	}
	n, _ := strconv.Atoi(m[1])
	return n, m[0], true
}

// Older reports whether the first x.y.z in a version line is older than
// major.minor, and that x.y.z; ok is false when there is none.
func Older(version string, major, minor int) (v string, older, ok bool) {
	m := semverRE().FindStringSubmatch(version)
	if m == nil {
		return "", false, false
	}
	var x, y int
	fmt.Sscanf(m[0], "%d.%d", &x, &y)
	return m[0], x < major || x == major && y < minor, true
}
