package agenttest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every CLI's command is built alike (offlineCmd): check the options,
// resolve the work folder (the key the CLIs trust it by), give the CLI a
// private HOME in a state folder, let its profile's Offline.Setup write its
// configuration there, and start it with a fixed environment plus the
// test's additions. This file holds that; each CLI's own configuration is
// in its folder under internal/agents (offline.go). claude.go, codex.go
// and gemini.go only keep typed options for the first three CLIs' tests.

// cliSetup is one CLI command under construction.
type cliSetup struct {
	name string // the profile's name: prefixes errors
	work string // the work folder, symlinks resolved
	home string // the CLI's private HOME, inside the state folder
}

// forTest fills in what a test need not give: the installed binary
// (skipping the test without it) and a temporary work folder. It returns
// a fresh state folder.
func forTest(t testing.TB, name string, binary, workDir *string) (stateDir string) {
	t.Helper()
	if *binary == "" {
		*binary = Binary(t, name)
	}
	if *workDir == "" {
		*workDir = t.TempDir()
	}
	return t.TempDir()
}

// mustCmd returns c, or fails the test with err.
func mustCmd(t testing.TB, c Cmd, err error) Cmd {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newCLISetup checks the options every CLI needs and makes the private
// HOME in stateDir.
func newCLISetup(name, stateDir, binary, workDir, model string) (*cliSetup, error) {
	if binary == "" || workDir == "" || model == "" {
		return nil, fmt.Errorf("%s command: Binary, WorkDir and Model must be set (have %q, %q, %q)",
			name, binary, workDir, model)
	}
	s := &cliSetup{name: name, home: filepath.Join(stateDir, "home")}
	work, err := realDir(workDir)
	if err != nil {
		return nil, s.wrap(err)
	}
	s.work = work
	if err := os.MkdirAll(s.home, 0o700); err != nil {
		return nil, s.wrap(err)
	}
	return s, nil
}

func (s *cliSetup) wrap(err error) error { return fmt.Errorf("%s command: %w", s.name, err) }

// cmd assembles the command: baseEnv, then the CLI's env, then the test's
// extra env (replacing same keys); the size defaults to 100×30.
func (s *cliSetup) cmd(argv, env, extraEnv []string, configDir string, cols, rows int) Cmd {
	if cols <= 0 {
		cols = 100
	}
	if rows <= 0 {
		rows = 30
	}
	env = mergeEnv(append(baseEnv(s.home), env...), extraEnv)
	return Cmd{Argv: argv, Env: env, Dir: s.work, Cols: cols, Rows: rows, ConfigDir: configDir}
}

// baseEnv is the environment every CLI gets: a private HOME, the test's
// PATH and locale, and a 256-colour terminal.
func baseEnv(home string) []string {
	env := []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"TERM=xterm-256color",
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
		"USER=" + envOr("USER", "tester"),
		"SHELL=/bin/bash",
	}
	if tz := os.Getenv("TZ"); tz != "" {
		env = append(env, "TZ="+tz)
	}
	return env
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// mergeEnv returns base with the KEY=value entries of extra added, an entry
// of extra replacing one of base with the same key.
func mergeEnv(base, extra []string) []string {
	out := append([]string(nil), base...)
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		replaced := false
		for i, b := range out {
			if bk, _, _ := strings.Cut(b, "="); bk == k {
				out[i] = kv
				replaced = true
			}
		}
		if !replaced {
			out = append(out, kv)
		}
	}
	return out
}

// realDir returns the absolute path of dir with symlinks resolved: the
// key the CLIs use to remember trusted folders.
func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("work dir %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("work dir %s: %w", dir, err)
	}
	return real, nil
}
