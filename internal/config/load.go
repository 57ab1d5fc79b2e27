package config

import (
	"crypto/x509"
	"errors"
	"fmt"
	"github.com/relayhq/relay/internal/lazyre"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Sources says where Load looks. The zero value reads nothing but the
// defaults.
type Sources struct {
	// UserFile is the user's file; "" means UserFile(Env), and a file that
	// does not exist is skipped.
	UserFile string
	// ProjectDir is where the search for the project starts (usually the
	// working folder): the nearest folder upward holding a `.relay` folder,
	// stopping at the git root or /. "" reads no project files.
	ProjectDir string
	// Env reads an environment variable (RELAY_NAME, RELAY_WORKSPACE,
	// RELAY_HUB, RELAY_PROFILE, and XDG_CONFIG_HOME and HOME for the user
	// file); nil reads none.
	Env func(string) string
	// Flags are command-line values, the highest precedence.
	Flags Flags
}

// Flags are the values a command line may set; "" means not given.
type Flags struct {
	Name      string // --name
	Workspace string // --workspace
	Hub       string // --hub
	Profile   string // --profile
	TLSCA     string // --tls-ca
}

// UserFile returns the user's configuration file:
// $XDG_CONFIG_HOME/relay/config.toml, else ~/.config/relay/config.toml,
// or "" when neither variable is set.
func UserFile(getenv func(string) string) string {
	if getenv == nil {
		return ""
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "relay", "config.toml")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "relay", "config.toml")
	}
	return ""
}

// FindProject returns the project root for dir: the nearest folder at or
// above dir that holds a `.relay` folder. The search stops at the first
// folder holding `.git` (the repository's root) or at /; ok is false when
// no project was found.
func FindProject(dir string) (root string, ok bool) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for {
		if st, err := os.Stat(filepath.Join(dir, ".relay")); err == nil && st.IsDir() {
			return dir, true
		}
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return "", false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// Load reads the files of src, merges them with the environment and flags
// over the defaults, and checks every value. Precedence, highest first:
// flags, environment, local file, project file, user file, defaults.
// Scalar values override; hook lists append (user, project, local);
// patterns merge field by field.
//
// A configuration mistake is returned as Errors (every mistake found, each
// an *Error matching ErrInvalid); a file that exists but cannot be read is
// a plain wrapped error.
func Load(src Sources) (*Config, error) {
	c := Default()
	var errs Errors
	pat := map[string]int{}
	setCmd := map[string]struct{}{}
	home := ""
	if src.Env != nil {
		home = src.Env("HOME")
	}

	type candidate struct {
		path, base string
		scope      Scope
	}
	var files []candidate
	user := src.UserFile
	if user == "" {
		user = UserFile(src.Env)
	}
	if user != "" {
		files = append(files, candidate{user, filepath.Dir(user), ScopeUser})
	}
	if src.ProjectDir != "" {
		if root, ok := FindProject(src.ProjectDir); ok {
			dir := filepath.Join(root, ".relay")
			files = append(files,
				candidate{filepath.Join(dir, "config.toml"), root, ScopeProject},
				candidate{filepath.Join(dir, "config.local.toml"), root, ScopeLocal})
		}
	}
	for _, cand := range files {
		data, err := os.ReadFile(cand.path)
		if errors.Is(err, fs.ErrNotExist) {
			c.Files = append(c.Files, FileInfo{Path: cand.path, Scope: cand.scope})
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read configuration %s: %w", cand.path, err)
		}
		c.Files = append(c.Files, FileInfo{Path: cand.path, Scope: cand.scope, Found: true})
		f, ferrs := parseFile(cand.path, data)
		if f != nil {
			a := &applier{c: c, f: f, base: cand.base, home: home, pat: pat, setCmd: setCmd}
			a.apply()
			ferrs = append(ferrs, a.errs...)
		}
		sortErrors(ferrs)
		errs = append(errs, ferrs...)
	}
	for _, p := range c.Patterns {
		if _, ok := setCmd[p.Key]; !ok {
			errs = append(errs, &Error{File: p.Source.File, Line: p.Source.Line, Col: p.Source.Col, Key: p.Key,
				Msg: "missing command (a string run by sh -c, or a list of strings)"})
		}
	}
	if len(errs) == 0 {
		errs = c.checkMemory()
	}
	errs = append(dropConsequences(errs), overlay(c, src.Env, src.Flags)...)
	if len(errs) > 0 {
		return nil, errs
	}
	return c, nil
}

// overlay applies the environment, then the flags.
func overlay(c *Config, getenv func(string) string, fl Flags) Errors {
	var errs Errors
	type entry struct {
		env, flag, key string
		fval           string
		dst            *string
		check          func(string) string
	}
	nameCheck := func(what string) func(string) string {
		return func(v string) string {
			if !nameRE.MatchString(v) {
				return fmt.Sprintf("%q is not %s (letters, digits, '_' and '-', at most 64, starting with a letter or digit)", v, what)
			}
			return ""
		}
	}
	entries := []entry{
		{"RELAY_NAME", "--name", "name", fl.Name, &c.Name, nameCheck("an agent name")},
		{"RELAY_WORKSPACE", "--workspace", "workspace", fl.Workspace, &c.Workspace, nameCheck("a workspace name")},
		{"RELAY_HUB", "--hub", "hub.url", fl.Hub, &c.Hub.URL, checkHubURL},
		{"RELAY_PROFILE", "--profile", "profile", fl.Profile, &c.Profile, nameCheck("a profile name")},
	}
	for _, e := range entries {
		if getenv == nil {
			break
		}
		if v := getenv(e.env); v != "" {
			if msg := e.check(v); msg != "" {
				errs = append(errs, &Error{Key: e.env, Msg: msg})
			} else {
				*e.dst = v
				c.sources[e.key] = Source{Kind: FromEnv, Name: e.env}
			}
		}
	}
	for _, e := range entries {
		if e.fval != "" {
			if msg := e.check(e.fval); msg != "" {
				errs = append(errs, &Error{Key: e.flag, Msg: msg})
			} else {
				*e.dst = e.fval
				c.sources[e.key] = Source{Kind: FromFlag, Name: e.flag}
			}
		}
	}
	// A CA file from the environment or a flag is relative to the
	// working folder, as a path typed in a shell is.
	var caEnv string
	if getenv != nil {
		caEnv = getenv("RELAY_TLS_CA")
	}
	for _, e := range []struct {
		src  Source
		path string
	}{{Source{Kind: FromEnv, Name: "RELAY_TLS_CA"}, caEnv}, {Source{Kind: FromFlag, Name: "--tls-ca"}, fl.TLSCA}} {
		if e.path == "" {
			continue
		}
		p, err := filepath.Abs(e.path)
		if err == nil {
			err = checkCA(p)
		}
		if err != nil {
			errs = append(errs, &Error{Key: e.src.Name, Msg: err.Error()})
			continue
		}
		c.Hub.TLSCA = p
		c.sources["hub.tls_ca"] = e.src
	}
	return errs
}

// checkCA reports what is wrong with a CA file: missing, a folder, too
// big, or holding no PEM certificate.
func checkCA(path string) error {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Errorf("%s does not exist", path)
	case st.IsDir():
		return fmt.Errorf("%s is a folder, not a file", path)
	case st.Size() > 1<<20:
		return fmt.Errorf("%s is %d bytes: too big for a CA certificate", path, st.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(b) {
		return fmt.Errorf("%s holds no PEM certificate (want the CA's, -----BEGIN CERTIFICATE-----)", path)
	}
	return nil
}

// dropConsequences removes a "missing command" or "no hooks" mistake about
// a table that also holds an unknown key: the unknown key is the likely
// cause (`comand = …`), and saying both is noise.
func dropConsequences(errs Errors) Errors {
	var unknown []string
	for _, e := range errs {
		if strings.HasPrefix(e.Msg, "unknown key") {
			unknown = append(unknown, e.Key)
		}
	}
	if len(unknown) == 0 {
		return errs
	}
	out := errs[:0:0]
	for _, e := range errs {
		if strings.HasPrefix(e.Msg, "missing command") || strings.HasPrefix(e.Msg, "no hooks") {
			table := indexRE().ReplaceAllString(e.Key, "") + "."
			caused := false
			for _, u := range unknown {
				caused = caused || strings.HasPrefix(u, table) || strings.HasPrefix(u, e.Key+".")
			}
			if caused {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

var indexRE = lazyre.New(`\[[0-9]+\]`)
