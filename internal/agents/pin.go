package agents

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Pin is the release of a CLI that relay is tested against: what
// .ci/install-agents installs (npm install Package@Version into the folder
// Dir of the agents cache) and what the tests run.
type Pin struct {
	Package string // the npm package
	Version string // its version
	Folder  string // the cache folder's name before "-VERSION"
	Bin     string // the executable in node_modules/.bin
	// VersionText is part of what `Bin --version` prints (stdout or
	// stderr) when the pinned release is installed.
	VersionText string
	// Postinstall, when set, is a script of the package (its path under
	// node_modules) that npm's postinstall step runs and may skip (with
	// ignore-scripts): the installer runs it with node when the binary
	// does not answer --version without it (Claude Code fetches its
	// native binary so).
	Postinstall string
}

// Dir is the pin's folder in the agents cache: Folder-Version.
func (p Pin) Dir() string { return p.Folder + "-" + p.Version }

// Offline says how to run a CLI with no connection but to a mock model
// server on 127.0.0.1 (the tests and the recorder, internal/testing/agenttest).
type Offline struct {
	// API is the wire protocol the CLI speaks to its model, one of
	// internal/testing/mockmodel's: "anthropic", "responses", "gemini", "chat"
	// (OpenAI chat completions).
	API string
	// Setup writes the CLI's configuration under o.Home (a private,
	// empty HOME) and returns the arguments and environment to add.
	Setup func(o OfflineOptions) (OfflineSetup, error)
	// Ready reports whether a screen shows the CLI ready for a prompt.
	Ready func(screen string) bool
}

// OfflineOptions are what an Offline.Setup is given.
type OfflineOptions struct {
	Home  string // the CLI's HOME, an existing private folder
	Work  string // the work folder, symbolic links resolved
	Model string // the mock server's base URL, e.g. http://127.0.0.1:PORT
}

// OfflineSetup is what an Offline.Setup adds to the command.
type OfflineSetup struct {
	Args []string // put before the test's arguments
	Env  []string // KEY=VALUE, added to HOME, PATH, TERM and the locale
	// ConfigDir is the CLI's configuration folder, where tests read its
	// session files.
	ConfigDir string
	// AnswerQueries says the CLI waits for answers to its terminal queries
	// at start (OpenCode's renderer), which the test terminal must give.
	AnswerQueries bool
}

// WriteFiles writes files (path relative to home → content) as private
// files, making their folders.
func WriteFiles(home string, files map[string]string) error {
	for rel, data := range files {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return fmt.Errorf("write %s: %w", rel, err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			return fmt.Errorf("write %s: %w", rel, err)
		}
	}
	return nil
}

// PackageVersion returns the version of the npm package pkg that the
// executable path (an npm bin link, or a file inside the package) belongs
// to, read from its package.json: no need to start the CLI, which for a
// Node program can take seconds on a loaded machine. It wraps
// fs.ErrNotExist when path is not inside pkg.
func PackageVersion(path, pkg string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("version of %s: %w", path, err)
	}
	for dir := filepath.Dir(real); ; dir = filepath.Dir(dir) {
		b, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err == nil {
			var p struct{ Name, Version string }
			if json.Unmarshal(b, &p) == nil && p.Name == pkg && p.Version != "" {
				return p.Version, nil
			}
		}
		if parent := filepath.Dir(dir); parent == dir {
			return "", fmt.Errorf("version of %s: no package.json of %s above it: %w", path, pkg, fs.ErrNotExist)
		}
	}
}

// ReadyIdle reports whether screen has a line (trimmed) that prompt
// accepts and no "esc to interrupt" footer, which Claude Code and Codex
// show while busy: an Offline.Ready for CLIs with a bare prompt row.
func ReadyIdle(screen string, prompt func(line string) bool) bool {
	if strings.Contains(screen, "esc to interrupt") {
		return false
	}
	for _, line := range strings.Split(screen, "\n") {
		if prompt(strings.TrimSpace(line)) {
			return true
		}
	}
	return false
}
