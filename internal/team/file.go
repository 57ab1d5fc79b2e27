// Package team starts, lists and stops a team of wrapped agents described
// by one file, .relay/team.toml: each agent in a tmux window of its own (or
// headless, in the background), its prompt typed once when it is ready, a
// git worktree of its own on request.
//
// Load reads and checks the file (every mistake at once, with FILE:LINE:COL);
// Up checks what the file asks of the machine (commands, folders, names)
// before it starts anything; Status and Down act on the agents it named.
package team

import (
	"errors"
	"fmt"
	"github.com/relayhq/relay/internal/lazyre"
	"os"
	"path/filepath"
	"strings"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/agents/registry"
	"github.com/relayhq/relay/internal/config"
)

// FileName is the team file's name in the project's .relay folder.
const FileName = "team.toml"

// ErrNoFile is returned by Find when no team file is there.
var ErrNoFile = errors.New("no team file")

// File is a team file as read and checked.
type File struct {
	Path string // absolute
	// Dir is where the agents' cwd are relative to: the project folder
	// (the one holding .relay) for .relay/team.toml, else the file's own.
	Dir       string
	Workspace string // "" when the file names none
	Agents    []Agent
}

// Agent is one [[agent]] of the file.
type Agent struct {
	Name     string
	Command  []string // argv
	Cwd      string   // absolute
	Prompt   string
	Worktree bool
	Env      map[string]string
	Profile  string
	Unsafe   bool
	Line     int // where its [[agent]] is, for messages
}

// The file format; every field optional so that absence can be told.
type fileTeam struct {
	Team  *fileHeader `toml:"team"`
	Agent []fileAgent `toml:"agent"`
}

type fileHeader struct {
	Workspace *string `toml:"workspace"`
}

type fileAgent struct {
	Name     *string           `toml:"name"`
	Command  []string          `toml:"command"`
	Cwd      *string           `toml:"cwd"`
	Prompt   *string           `toml:"prompt"`
	Worktree *bool             `toml:"worktree"`
	Env      map[string]string `toml:"env"`
	Profile  *string           `toml:"profile"`
	Unsafe   *bool             `toml:"unsafe"`
}

// unsafeFlags are the agent CLIs' flags that switch their own safety off
// (permission prompts, sandbox): refused unless the agent says unsafe = true.
var unsafeFlags = []string{
	"--dangerously-skip-permissions",
	"--dangerously-bypass-approvals-and-sandbox",
	"--yolo",
	"--allow-dangerously-skip-permissions",
}

var envKeyRE = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Find returns the team file for the folder dir: dir/.relay/team.toml in
// the project (config.FindProject), or ErrNoFile.
func Find(dir string) (string, error) {
	root, ok := config.FindProject(dir)
	if ok {
		p := filepath.Join(root, ".relay", FileName)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: no .relay/%s here or above (up to the git root); name one with --file", ErrNoFile, FileName)
}

// Load reads and checks the team file at path. A mistake in it is returned
// as config.Errors (each matching config.ErrInvalid, every one found); a
// file that cannot be read as a plain wrapped error.
func Load(path string) (*File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("team file %s: %w", path, err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("read team file: %w", err)
	}
	return Parse(abs, data)
}

// Parse decodes and checks a team file's bytes; name is its path (absolute:
// the agents' folders are relative to its folder).
func Parse(name string, data []byte) (*File, error) {
	var ft fileTeam
	pos, errs := config.Decode(name, data, &ft)
	if !pos.Decoded() {
		return nil, errs
	}
	f := &File{Path: name, Dir: filepath.Dir(name)}
	if filepath.Base(f.Dir) == ".relay" {
		f.Dir = filepath.Dir(f.Dir)
	}
	if ft.Team != nil && ft.Team.Workspace != nil {
		f.Workspace = *ft.Team.Workspace
		if err := bus.ValidName("workspace", f.Workspace); err != nil {
			errs = append(errs, pos.ErrAt("team.workspace", "%v", trimBadName(err)))
		}
	}
	if len(ft.Agent) == 0 && len(errs) == 0 {
		errs = append(errs, &config.Error{File: name, Msg: "no agent: add one with [[agent]], name and command"})
	}
	// A misspelt key is the mistake; the key then missing is its
	// consequence, not said again.
	unknown := make([]int, 0, len(errs))
	for _, e := range errs {
		unknown = append(unknown, e.Line)
	}
	misspelt := func(i int) bool {
		from := pos.ErrAt(fmt.Sprintf("agent[%d]", i), "").Line
		to := pos.ErrAt(fmt.Sprintf("agent[%d]", i+1), "").Line
		for _, l := range unknown {
			if l > from && (i == len(ft.Agent)-1 || l < to) {
				return true
			}
		}
		return false
	}
	seen := map[string]string{}
	for i, fa := range ft.Agent {
		key := fmt.Sprintf("agent[%d]", i)
		a := Agent{Command: fa.Command, Env: fa.Env}
		a.Line = pos.ErrAt(key, "").Line
		quiet := misspelt(i)
		switch {
		case fa.Name == nil && quiet:
		case fa.Name == nil:
			errs = append(errs, pos.ErrAt(key, "missing name"))
		default:
			a.Name = *fa.Name
			if err := bus.ValidName("agent", a.Name); err != nil {
				errs = append(errs, pos.ErrAt(key+".name", "%v", trimBadName(err)))
			} else if prev, dup := seen[strings.ToLower(a.Name)]; dup {
				errs = append(errs, pos.ErrAt(key+".name", "%q is named twice (first as %q)", a.Name, prev))
			} else {
				seen[strings.ToLower(a.Name)] = a.Name
			}
		}
		if (len(fa.Command) == 0 && !quiet) || (len(fa.Command) > 0 && fa.Command[0] == "") {
			errs = append(errs, pos.ErrAt(pick(pos, key+".command", key), "missing command: a list of strings, as in command = [\"claude\"]"))
		}
		a.Cwd = f.Dir
		if fa.Cwd != nil {
			a.Cwd = *fa.Cwd
			if !filepath.IsAbs(a.Cwd) {
				a.Cwd = filepath.Join(f.Dir, a.Cwd)
			}
		}
		if fa.Prompt != nil {
			a.Prompt = *fa.Prompt
		}
		a.Worktree = fa.Worktree != nil && *fa.Worktree
		a.Unsafe = fa.Unsafe != nil && *fa.Unsafe
		if fa.Profile != nil && *fa.Profile != "" {
			a.Profile = *fa.Profile
			if _, err := registry.Named(a.Profile); err != nil {
				errs = append(errs, pos.ErrAt(key+".profile", "unknown profile %q%s", a.Profile, hint(a.Profile)))
			}
		}
		for k := range fa.Env {
			if !envKeyRE().MatchString(k) {
				errs = append(errs, pos.ErrAt(key+".env."+k, "not a variable name (letters, digits and '_', not starting with a digit)"))
			}
		}
		if !a.Unsafe {
			for j, arg := range fa.Command {
				if flag := unsafeFlag(arg); flag != "" {
					errs = append(errs, pos.ErrAt(fmt.Sprintf("%s.command[%d]", key, j),
						"%s switches the agent's own safety off: refused unless the agent says unsafe = true", flag))
				}
			}
		}
		f.Agents = append(f.Agents, a)
	}
	if len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}
	return f, nil
}

// unsafeFlag returns the unsafe flag arg is (also as --flag=value), or "".
func unsafeFlag(arg string) string {
	name, _, _ := strings.Cut(arg, "=")
	for _, f := range unsafeFlags {
		if name == f {
			return f
		}
	}
	return ""
}

func pick(pos config.Positions, key, fallback string) string {
	if pos.Has(key) {
		return key
	}
	return fallback
}

func hint(profile string) string {
	if s := config.Suggest(profile, registry.Names()); s != "" {
		return s
	}
	return " (want one of " + strings.Join(registry.Names(), ", ") + ")"
}

// trimBadName drops the sentinel's words from a bus name error.
func trimBadName(err error) string {
	return strings.TrimPrefix(err.Error(), bus.ErrBadName.Error()+": ")
}

// Named returns the file's agent called name.
func (f *File) Named(name string) (Agent, bool) {
	for _, a := range f.Agents {
		if a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}
