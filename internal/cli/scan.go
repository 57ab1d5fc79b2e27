package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/relayhq/relay/internal/agents/registry"
	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/patterns"
	"github.com/relayhq/relay/internal/scanner"
)

// scanOptions are the parsed flags of relay scan.
type scanOptions struct {
	cols, rows int
	profile    string
	ns         []string
	file       string
}

// scanRecord is one line of relay scan's output.
type scanRecord struct {
	NS        string  `json:"ns"`
	Target    string  `json:"target"`
	Body      string  `json:"body"`
	Block     bool    `json:"block,omitempty"`
	Truncated bool    `json:"truncated,omitempty"`
	Row       int     `json:"row"`            // screen row of the first line; negative once scrolled off
	Time      float64 `json:"time,omitempty"` // seconds into an asciicast
}

func runScan(ctx context.Context, env *Env, args []string) error {
	fs := newFlags(env, "scan", "[--cols C --rows R] [--profile P] [--ns NAME]... FILE|-")
	var o scanOptions
	fs.IntVar(&o.cols, "cols", 0, "terminal width (default: the asciicast header, a NAME-COLSxROWS file name, else 80)")
	fs.IntVar(&o.rows, "rows", 0, "terminal height (default: the asciicast header, a NAME-COLSxROWS file name, else 24)")
	fs.StringVar(&o.profile, "profile", "auto", "agent profile whose screen cues to use: auto (guess from the stream), "+strings.Join(registry.Names(), ", "))
	fs.Func("ns", "a namespace to treat as registered, beside relay, broadcast, memory and the configured ones (repeatable)", func(v string) error {
		o.ns = append(o.ns, v)
		return nil
	})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() != 1:
		return usagef("scan takes one FILE (or - for standard input), got %d arguments", fs.NArg())
	case o.cols < 0 || o.cols > 4096:
		return usagef("--cols %d: want 1 to 4096", o.cols)
	case o.rows < 0 || o.rows > 4096:
		return usagef("--rows %d: want 1 to 4096", o.rows)
	}
	o.file = fs.Arg(0)
	ns, err := patterns.NewNamespaces(o.ns...)
	if err != nil {
		return usagef("--ns: %v", err)
	}
	if err := addConfiguredNamespaces(env, ns); err != nil {
		return err
	}
	var cues scanner.Cues // unknown: a TUI that wraps its own text, with no cues
	if o.profile != "auto" {
		prof, err := registry.Named(o.profile)
		if err != nil {
			return usagef("--profile %q: want auto or one of %s", o.profile, strings.Join(registry.Names(), ", "))
		}
		cues = prof.Cues
	}
	var in io.Reader = env.Stdin
	name := "standard input"
	if o.file != "-" {
		f, err := os.Open(o.file)
		if err != nil {
			return err // names the file
		}
		defer f.Close()
		in, name = f, o.file
	}
	br := bufio.NewReaderSize(in, 64<<10)
	if o.profile == "auto" {
		head, _ := br.Peek(64 << 10)
		if name := registry.Detect(head); name != "" {
			prof, _ := registry.Named(name)
			cues = prof.Cues
		}
	}
	enc := json.NewEncoder(env.Stdout)
	enc.SetEscapeHTML(false)
	var werr error
	err = scanner.Replay(ctx, br, scanner.ReplayOptions{
		Cols: o.cols, Rows: o.rows, Name: nameForSize(o.file), Namespaces: ns, Cues: cues,
	}, func(e scanner.Event) {
		if e.Kind != scanner.EventCommand || werr != nil {
			return
		}
		c := e.Command
		werr = enc.Encode(scanRecord{
			NS: c.NS, Target: c.Target, Body: c.Body, Block: c.Block, Truncated: c.Truncated,
			Row: e.Row, Time: e.Time.Sub(time.Unix(0, 0)).Seconds(),
		})
	})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if werr != nil {
		return fmt.Errorf("%s: write output: %w", name, werr)
	}
	return nil
}

// addConfiguredNamespaces registers the namespaces of the user's and the
// project's configuration ([patterns.NAME]), as a wrapped agent would.
func addConfiguredNamespaces(env *Env, ns *patterns.Namespaces) error {
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("find the working folder: %w", err)
	}
	c, err := config.Load(config.Sources{ProjectDir: wd, Env: env.getenv})
	if errors.Is(err, config.ErrInvalid) {
		fmt.Fprintln(env.Stderr, err)
		return &ExitError{Code: ExitUsage}
	}
	if err != nil {
		return err
	}
	for _, p := range c.Patterns {
		if err := ns.Add(p.Name); err != nil {
			return fmt.Errorf("configured namespace: %w", err)
		}
	}
	return nil
}

// nameForSize is the file name to read a size from ("" for stdin).
func nameForSize(file string) string {
	if file == "-" {
		return ""
	}
	return strings.TrimSpace(file)
}
