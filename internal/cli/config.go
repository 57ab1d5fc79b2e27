package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/termsafe"
)

// configOptions are the flags of `relay config check|show`.
type configOptions struct {
	project string       // where the project search starts ("" is the working folder)
	json    bool         // show: JSON instead of text
	flags   config.Flags // values as other commands' flags would set them
}

func runConfig(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		return usagef("want a sub-command: check or show")
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "check", "show":
	case "-h", "--help", "help":
		fmt.Fprint(env.Stdout, "Usage: relay config check|show [--json] [--project DIR] [--name N] [--workspace W] [--hub URL] [--profile P]\n\n"+
			"  check  validate the configuration files; print ok and the files read, or every mistake (exit 2)\n"+
			"  show   print the merged configuration, each value with where it came from\n")
		printKeys(env.Stdout, "config")
		return nil
	default:
		return usagef("unknown sub-command %q (want check or show)", sub)
	}
	var o configOptions
	fs := newFlags(env, "config "+sub, "[FLAGS]")
	fs.StringVar(&o.project, "project", "", "start the search for .relay/ in `DIR` (default: the working folder)")
	fs.StringVar(&o.flags.Name, "name", "", "agent `name`, as relay wrap --name would set it")
	fs.StringVar(&o.flags.Workspace, "workspace", "", "`workspace`, as --workspace would set it")
	fs.StringVar(&o.flags.Hub, "hub", "", "hub `URL`, as --hub would set it")
	fs.StringVar(&o.flags.Profile, "profile", "", "agent `profile`, as --profile would set it")
	if sub == "show" {
		fs.BoolVar(&o.json, "json", false, "print JSON")
	}
	if err := parseFlags(fs, rest); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	c, err := loadConfig(env, o)
	if err != nil {
		return err
	}
	if sub == "check" {
		// A handler's program that is missing or not executable would only
		// fail when an agent first uses it: say so now, with file:line.
		if errs := c.CheckCommands(); len(errs) > 0 {
			fmt.Fprintln(env.Stderr, termsafe.Text(errs.Error()))
			return &ExitError{Code: ExitUsage}
		}
		return printCheck(env.Stdout, c)
	}
	if o.json {
		return printShowJSON(env.Stdout, c)
	}
	return printShow(env.Stdout, c)
}

// loadConfig loads the configuration for a command; a configuration
// mistake is printed to stderr (every one, with file and line) and becomes
// exit status 2.
func loadConfig(env *Env, o configOptions) (*config.Config, error) {
	dir := o.project
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("find the working folder: %w", err)
		}
		dir = wd
	}
	c, err := config.Load(config.Sources{ProjectDir: dir, Env: env.getenv, Flags: o.flags})
	if errors.Is(err, config.ErrInvalid) {
		fmt.Fprintln(env.Stderr, termsafe.Text(err.Error())) // a key or value may hold escapes
		return nil, &ExitError{Code: ExitUsage}
	}
	return c, err
}

func printCheck(w io.Writer, c *config.Config) error {
	var b strings.Builder
	b.WriteString("ok\n")
	writeFiles(&b, c, "")
	_, err := io.WriteString(w, termsafe.Text(b.String()))
	return err
}

func writeFiles(b *strings.Builder, c *config.Config, prefix string) {
	project := false
	for _, f := range c.Files {
		note := ""
		if !f.Found {
			note = " (not found)"
		}
		project = project || f.Scope == config.ScopeProject
		fmt.Fprintf(b, "%s%-8s %s%s\n", prefix, f.Scope, f.Path, note)
	}
	if !project {
		fmt.Fprintf(b, "%s%-8s none (no .relay folder here or above, up to the git root or /)\n", prefix, config.ScopeProject)
	}
}

func printShow(w io.Writer, c *config.Config) error {
	var b strings.Builder
	writeFiles(&b, c, "# ")
	vals := c.Values()
	width := 0
	for _, v := range vals {
		width = max(width, len(v.Key))
	}
	for _, v := range vals {
		fmt.Fprintf(&b, "%-*s = %s  # %s\n", width, termsafe.Line(v.Key), termsafe.Line(v.Text()), termsafe.Line(v.Source.String()))
	}
	_, err := io.WriteString(w, termsafe.Text(b.String()))
	return err
}

type showFile struct {
	Path  string `json:"path"`
	Scope string `json:"scope"`
	Found bool   `json:"found"`
}

type showValue struct {
	Key    string `json:"key"`
	Value  any    `json:"value"`
	Source string `json:"source"`
}

func printShowJSON(w io.Writer, c *config.Config) error {
	out := struct {
		Files  []showFile  `json:"files"`
		Values []showValue `json:"values"`
	}{Files: []showFile{}}
	for _, f := range c.Files {
		out.Files = append(out.Files, showFile{f.Path, string(f.Scope), f.Found})
	}
	for _, v := range c.Values() {
		out.Values = append(out.Values, showValue{v.Key, v.Value, v.Source.String()})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
