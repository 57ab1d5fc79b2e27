//go:build !lean

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/agents/registry"
	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/hubdial"
	"github.com/relayhq/relay/internal/memory"
	"github.com/relayhq/relay/internal/statedir"
	"github.com/relayhq/relay/internal/termsafe"
)

// doctorTimeout bounds each probe: a CLI's --version, the hub, the memory
// service.
const doctorTimeout = 5 * time.Second

// doctorCheck is one line of `relay doctor`: what was checked, whether it
// works, and how to fix it when it does not.
type doctorCheck struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
	// Skipped says the check could not run because an earlier one failed.
	Skipped bool `json:"skipped,omitempty"`
}

// doctorAgent is what `relay doctor` found about one agent CLI on PATH.
type doctorAgent struct {
	Command   string `json:"command"`
	Path      string `json:"path"`
	Version   string `json:"version,omitempty"`
	Profile   string `json:"profile"`
	CLI       string `json:"cli"`
	ExactText string `json:"exact_text"`
	State     string `json:"state"`
	MCP       string `json:"mcp"`
	OK        bool   `json:"ok"`
	Problem   string `json:"problem,omitempty"`
	Fix       string `json:"fix,omitempty"`
}

// doctorReport is the whole of `relay doctor --json`.
type doctorReport struct {
	OK       bool          `json:"ok"`
	Checks   []doctorCheck `json:"checks"`
	Agents   []doctorAgent `json:"agents"`
	NotFound []string      `json:"not_found"`
}

func runDoctor(ctx context.Context, env *Env, args []string) error {
	var asJSON bool
	fs := newFlags(env, "doctor", "[--json]\n\nChecks the state folder, the hub and its memory service, the configuration, and every agent CLI on PATH\n("+strings.Join(registry.Commands(), ", ")+"): its version, its profile, and where relay gets its exact text and its state.\nExit status 1 when anything is broken.")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("doctor takes no arguments, got %q", fs.Arg(0))
	}
	rep := diagnose(ctx, env)
	var err error
	if asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		err = enc.Encode(rep)
	} else {
		err = printDoctor(env.Stdout, rep)
	}
	if err != nil {
		return err
	}
	if !rep.OK {
		return &ExitError{Code: ExitFailure}
	}
	return nil
}

// diagnose runs every check.
func diagnose(ctx context.Context, env *Env) doctorReport {
	rep := doctorReport{Checks: []doctorCheck{}, Agents: []doctorAgent{}, NotFound: []string{}}
	home, homeCheck := checkHome(env)
	cfgCheck, cfg := checkConfig(env)
	rep.Checks = append(rep.Checks, homeCheck, cfgCheck)
	rep.Checks = append(rep.Checks, checkHub(ctx, env, home, homeCheck.OK, cfg)...)
	if cfg != nil {
		rep.Checks = append(rep.Checks, checkMemoryStore(ctx, env, cfg.Memory)...)
	}
	for _, prof := range registry.All() { // the CLIs with a profile
		if len(prof.Commands) == 0 {
			continue
		}
		name := prof.Commands[0]
		path, ok := lookPath(name, env.getenv("PATH"))
		if !ok {
			rep.NotFound = append(rep.NotFound, name)
			continue
		}
		a := checkAgent(ctx, env, prof, name, path, home)
		if cfg != nil && !cfg.MCP {
			a.MCP = "off (mcp = false, " + cfg.Source("mcp").String() + ")"
		}
		rep.Agents = append(rep.Agents, a)
	}
	rep.OK = true
	for _, c := range rep.Checks {
		rep.OK = rep.OK && (c.OK || c.Skipped) // a skipped check follows a failed one
	}
	for _, a := range rep.Agents {
		rep.OK = rep.OK && a.OK
	}
	return rep
}

// checkHome checks the state folder: it exists, is private (0700) and
// writable.
func checkHome(env *Env) (string, doctorCheck) {
	c := doctorCheck{Name: "state folder"}
	home, err := statedir.Lookup(env.getenv)
	if err != nil {
		c.Detail, c.Fix = err.Error(), "set RELAY_HOME to a folder of yours"
		return "", c
	}
	var unsafe *statedir.UnsafeError
	if errors.As(statedir.CheckDir(home), &unsafe) {
		c.Detail, c.Fix = unsafe.Path+" "+unsafe.Problem, unsafe.Fix
		return home, c
	}
	fi, err := os.Stat(home)
	switch {
	case errors.Is(err, os.ErrNotExist):
		c.Detail = home + " does not exist"
		c.Fix = "run `relay up --detach` (it creates it), or mkdir -m 700 " + home
		return home, c
	case err != nil:
		c.Detail, c.Fix = err.Error(), "check the permissions of "+filepath.Dir(home)
		return home, c
	case !fi.IsDir():
		c.Detail, c.Fix = home+" is not a folder", "remove it or point RELAY_HOME elsewhere"
		return home, c
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		c.Detail = fmt.Sprintf("%s has mode %04o; it holds the hub's token and must be private (0700)", home, perm)
		c.Fix = "chmod 700 " + home
		return home, c
	}
	f, err := os.CreateTemp(home, ".doctor-*")
	if err != nil {
		c.Detail, c.Fix = notWritable(home, err)
		return home, c
	}
	f.Close()
	os.Remove(f.Name())
	c.OK, c.Detail = true, home+" (mode 0700, writable)"
	return home, c
}

// notWritable says why the state folder home cannot be written (err, from
// creating a file in it) and what to do: a read-only file system is not
// fixed by changing the owner.
func notWritable(home string, err error) (detail, fix string) {
	if errors.Is(err, syscall.EROFS) {
		return fmt.Sprintf("%s is on a read-only file system", home),
			"point RELAY_HOME at a folder on a writable file system (or remount this one read-write)"
	}
	return fmt.Sprintf("%s is not writable: %v", home, err), "chown it to your user, or point RELAY_HOME elsewhere"
}

// checkConfig loads the configuration as every command does; nil when it
// has mistakes.
func checkConfig(env *Env) (doctorCheck, *config.Config) {
	c := doctorCheck{Name: "config"}
	quiet := *env
	var errs bytes.Buffer
	quiet.Stderr = &errs
	cfg, err := loadConfig(&quiet, configOptions{})
	if err != nil {
		msg := strings.TrimSpace(errs.String())
		if msg == "" {
			msg = err.Error()
		}
		c.Detail, c.Fix = msg, "correct the files named above; `relay config check` lists every mistake"
		return c, nil
	}
	var files []string
	for _, f := range cfg.Files {
		if f.Found {
			files = append(files, f.Path)
		}
	}
	c.OK, c.Detail = true, "ok, no configuration files (defaults)"
	if len(files) > 0 {
		c.OK, c.Detail = true, "ok: "+strings.Join(files, ", ")
	}
	return c, cfg
}

// checkHub finds the hub as relay send would (flags aside), connects to it
// and asks its memory service for one memory.
func checkHub(ctx context.Context, env *Env, home string, homeOK bool, cfg *config.Config) []doctorCheck {
	hc := doctorCheck{Name: "hub"}
	mc := doctorCheck{Name: "memory", Detail: "not checked: no hub", Skipped: true}
	if cfg != nil && cfg.Hub.URL == config.NoHub {
		hc.OK, hc.Detail = true, "none: agents run alone (hub = none)"
		mc.Detail = "not checked: no hub"
		return []doctorCheck{hc, mc}
	}
	var o bus.Options
	var err error
	switch {
	case cfg != nil && (homeOK || cfg.Hub.URL != ""): // an external hub needs no state folder
		o, err = busOptions(ctx, env, &hubFlags{}, false)
	case home != "":
		o.Workspace = bus.DefaultWorkspace
		o, err = (&hubdial.Resolver{Home: home}).Options()
		o.Workspace = bus.DefaultWorkspace
	default:
		err = errors.New("no state folder to find a hub in")
	}
	if err != nil {
		hc.Detail, _, _ = strings.Cut(err.Error(), "; start one") // the fix has its own line
		hc.Fix = "start one with `relay up --detach`, or point at one with RELAY_HUB"
		return []doctorCheck{hc, mc}
	}
	cctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	nc, err := memConnect(cctx, o)
	switch {
	case errors.Is(err, bus.ErrUntrustedHub):
		hc.Detail, _, _ = strings.Cut(err.Error(), "; ") // the fix has its own line
		hc.Fix = "give the CA that signed the hub's certificate with hub.tls_ca or RELAY_TLS_CA, and dial a name the certificate holds"
		return []doctorCheck{hc, mc}
	case errors.Is(err, bus.ErrUnauthorized):
		hc.Detail, _, _ = strings.Cut(err.Error(), "; ")
		hc.Fix = "copy the hub's token (RELAY_HOME/hub/token on its machine) into RELAY_TOKEN or the file hub.token_file names"
		if o.Creds != "" {
			hc.Fix = fmt.Sprintf("the credentials in %s were refused: revoked (relay creds list says so) or not made for these servers; get new ones with relay creds issue NAME --out FILE", o.Creds)
		}
		return []doctorCheck{hc, mc}
	case err != nil:
		hc.Detail = fmt.Sprintf("%s does not answer: %v", o.URL, err)
		hc.Fix = "restart it: `relay down; relay up --detach` (for an external server, check RELAY_HUB and RELAY_TOKEN)"
		return []doctorCheck{hc, mc}
	}
	defer nc.Close()
	mc.Skipped = false
	hc.OK, hc.Detail = true, fmt.Sprintf("%s reachable (workspace %s)", o.URL, o.Workspace)
	_, err = hubdial.Memory(nc).List(cctx, memory.Filter{Workspace: o.Workspace, Limit: 1})
	switch {
	case errors.Is(err, memory.ErrNoService):
		mc.Detail = "no memory service answers on " + o.URL
		mc.Fix = "the hub of `relay up` serves it: restart it with `relay down; relay up --detach`, or run `relay up` beside an external server"
	case err != nil:
		mc.Detail, mc.Fix = err.Error(), "see the hub's log, "+filepath.Join(hub.Dir(home), "hub.log")
	default:
		mc.OK, mc.Detail = true, "the memory service answers"
	}
	return append([]doctorCheck{hc, mc}, checkInboxes(ctx, o)...)
}

// lookPath finds name in the folders of path, as the shell would.
func lookPath(name, path string) (string, bool) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// checkAgent asks one CLI its version and says, as its profile does, where
// relay will get its exact text and its state.
func checkAgent(ctx context.Context, env *Env, prof agents.Profile, name, path, home string) doctorAgent {
	a := doctorAgent{Command: name, Path: path, OK: true}
	a.Profile, a.CLI = prof.Name, prof.CLI
	a.ExactText, a.State = "screen", prof.ScreenState()
	a.MCP = "not registered by relay wrap (register relay mcp by hand: docs/mcp.md)"
	vctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	v, err := "", errors.New("no version read")
	if prof.Version != nil {
		v, err = prof.Version(path)
	}
	if err != nil {
		v, err = agents.Version(vctx, path, env.environ())
	}
	if err != nil {
		a.OK, a.Problem = false, err.Error()
		a.Fix = fmt.Sprintf("check that it runs: %s --version (reinstall it if it does not)", path)
	} else {
		a.Version = v
	}
	if prof.Diagnose == nil {
		return a
	}
	d := prof.Diagnose(ctx, agents.Probe{Path: path, Version: a.Version, Env: env.environ(), RelayBinary: hookBinary(env), Home: home})
	if d.ExactText != "" {
		a.ExactText = d.ExactText
	}
	if d.State != "" {
		a.State = d.State
	}
	if d.MCP != "" {
		a.MCP = d.MCP
	}
	if d.Problem != "" {
		a.OK, a.Problem, a.Fix = false, d.Problem, d.Fix
	}
	return a
}

// hookBinary is the relay that Claude Code's hooks would run: this program
// when it is relay, else relay on PATH (as relay wrap chooses it).
func hookBinary(env *Env) string {
	if exe := env.Executable; exe != "" && strings.HasPrefix(filepath.Base(exe), "relay") {
		return exe
	}
	p, _ := lookPath("relay", env.getenv("PATH"))
	return p
}

// printDoctor writes the report for people: one line per check, and under
// each problem the line that says how to fix it.
func printDoctor(w io.Writer, rep doctorReport) error {
	var b strings.Builder
	mark := func(ok bool) string {
		if ok {
			return "ok  "
		}
		return "FAIL"
	}
	for _, c := range rep.Checks {
		m := mark(c.OK)
		if c.Skipped {
			m = "--  "
		}
		fmt.Fprintf(&b, "%s  %-12s %s\n", m, c.Name, c.Detail)
		if c.Fix != "" && !c.OK {
			fmt.Fprintf(&b, "      %-12s fix: %s\n", "", c.Fix)
		}
	}
	for _, a := range rep.Agents {
		version := a.Version
		if version == "" {
			version = "version unknown"
		}
		fmt.Fprintf(&b, "%s  %-12s %s (%s), profile %s\n", mark(a.OK), a.Command, a.Path, version, a.Profile)
		fmt.Fprintf(&b, "      %-12s exact text: %s\n", "", a.ExactText)
		fmt.Fprintf(&b, "      %-12s state: %s\n", "", a.State)
		fmt.Fprintf(&b, "      %-12s mcp tools: %s\n", "", a.MCP)
		if !a.OK {
			fmt.Fprintf(&b, "      %-12s problem: %s\n", "", a.Problem)
			fmt.Fprintf(&b, "      %-12s fix: %s\n", "", a.Fix)
		}
	}
	if len(rep.NotFound) > 0 {
		fmt.Fprintf(&b, "--    %-12s %s (not on PATH)\n", "not found", strings.Join(rep.NotFound, ", "))
	}
	if rep.OK {
		b.WriteString("all good\n")
	} else {
		b.WriteString("something is broken: see the fix lines above\n")
	}
	// Details quote files, the hub and agent CLIs' answers: shown, never obeyed.
	_, err := io.WriteString(w, termsafe.Text(b.String()))
	return err
}
