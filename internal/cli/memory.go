//go:build !lean

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/hubdial"
	"github.com/relayhq/relay/internal/memory"
	"github.com/relayhq/relay/internal/termsafe"
)

const memorySynopsis = `save TEXT… | search QUERY… | list | get ID | forget ID | export | import [FILE] | reindex

The shared memory that agents reach with @memory:. With a hub running it goes
through the hub's memory service; without one it opens RELAY_HOME/memory.db
directly (and says so on stderr). Flags may come before or after the words.

  save TEXT…     save a memory (trailing #words are tags, as with @memory:save)
  search QUERY…  search: words, "a phrase", prefix*; --limit results; --mode
                 lexical, semantic or hybrid (the default with an embedder)
  list           the newest memories
  get ID         one memory
  forget ID      delete one memory
  export         every memory as JSON lines, to stdout
  import [FILE]  add memories from JSON lines (FILE or - for stdin)
  reindex        make every memory's vector again with [memory.embedder]
                 (the file in RELAY_HOME, directly), showing progress`

// memoryFlags are the options of `relay memory`.
type memoryFlags struct {
	hub    hubFlags
	json   bool
	scope  string
	tags   string
	limit  int
	author string
	mode   string
}

func runMemory(ctx context.Context, env *Env, args []string) error {
	var f memoryFlags
	fs := newFlags(env, "memory", memorySynopsis)
	addHubFlags(fs, &f.hub)
	fs.BoolVar(&f.json, "json", false, "print JSON (one array, or one object) for scripts")
	fs.StringVar(&f.scope, "scope", "", "`scope` to save in (agent, workspace, global; default workspace), or to keep when searching and listing")
	fs.StringVar(&f.tags, "tags", "", "comma-separated `tags` to save with, or that results must carry")
	fs.IntVar(&f.limit, "limit", 0, "how many results or memories at most (default 10 for search, 20 for list)")
	fs.StringVar(&f.author, "as", "", "save as `name` (default: $USER, else human)")
	fs.StringVar(&f.mode, "mode", "", "search `mode`: lexical, semantic or hybrid (default hybrid with [memory.embedder], else lexical)")
	words, err := memParseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(words) == 0 {
		return usagef("want a verb: save, search, list, get, forget, export, import or reindex")
	}
	verb, words := words[0], words[1:]
	var scope memory.Scope
	if f.scope != "" {
		if scope, err = memory.ParseScope(f.scope); err != nil {
			return usagef("--scope: %v", err)
		}
	}
	switch verb {
	case "save", "search":
		if len(words) == 0 {
			return usagef("%s wants text, e.g. relay memory %s 'deploys need the VPN'", verb, verb)
		}
	case "get", "forget":
		if len(words) != 1 {
			return usagef("%s wants one id, e.g. relay memory %s k3x9a2bq", verb, verb)
		}
	case "list", "export", "reindex":
		if len(words) > 0 {
			return usagef("%s takes no words, got %q", verb, words[0])
		}
	case "import":
		if len(words) > 1 {
			return usagef("import takes one file at most, got %d", len(words))
		}
	default:
		return usagef("unknown verb %q: want save, search, list, get, forget, export, import or reindex", verb)
	}
	switch f.mode {
	case "", memory.ModeLexical, memory.ModeSemantic, memory.ModeHybrid:
	default:
		return usagef("--mode %q: want lexical, semantic or hybrid", f.mode)
	}
	if f.mode != "" && verb != "search" {
		return usagef("--mode is for search")
	}
	if verb == "reindex" {
		return runReindex(ctx, env, f.json)
	}

	readOnly := verb == "search" || verb == "list" || verb == "get" || verb == "export"
	api, workspace, done, err := openMemory(ctx, env, &f.hub, readOnly)
	if err != nil {
		return err
	}
	defer done()
	filter := memory.Filter{Workspace: workspace, Scope: scope, Limit: f.limit}
	if f.tags != "" {
		filter.Tags = memory.NormalizeTags([]string{f.tags})
	}
	err = runMemoryVerb(ctx, env, api, &f, verb, words, filter)
	if errors.Is(err, memory.ErrInvalid) {
		return usagef("%v", err)
	}
	return err
}

func runMemoryVerb(ctx context.Context, env *Env, api memory.API, f *memoryFlags, verb string, words []string, filter memory.Filter) error {
	now := time.Now()
	out := env.Stdout
	switch verb {
	case "save":
		text, tags := memory.SplitTags(strings.Join(words, " "))
		author := f.author
		if author == "" {
			author = defaultSender(env)
			if id, _ := agentIdentity(env); id != nil {
				author = id.Name // the agent's own relay memory save
			}
		}
		m, created, err := api.Save(ctx, memory.Memory{
			Text: text, Tags: append(tags, filter.Tags...), Author: author,
			Workspace: filter.Workspace, Scope: filter.Scope,
		})
		if err != nil {
			return err
		}
		if st, ok := api.(*memory.Store); ok && created {
			// No hub embeds it: this command does, briefly.
			ectx, cancel := context.WithTimeout(ctx, 10*time.Second)
			if err := st.EmbedNow(ectx); err != nil {
				fmt.Fprintf(env.Stderr, "relay: saved, but the embedder failed: %s\nrelay: the memory gets its vector from the hub or relay memory reindex\n", termsafe.Line(err.Error()))
			}
			cancel()
		}
		if st, ok := api.(*memory.QdrantStore); ok {
			// No hub sends it to Qdrant: this command does, briefly.
			ectx, cancel := context.WithTimeout(ctx, 10*time.Second)
			if err := st.Sync(ectx); err != nil {
				fmt.Fprintf(env.Stderr, "relay: saved in %s, but not yet sent to qdrant: %s\nrelay: the hub sends it when it runs (or relay memory reindex)\n",
					termsafe.Line(st.Local().Path()), termsafe.Line(err.Error()))
			}
			cancel()
		}
		if f.json {
			return memJSON(out, struct {
				Memory  memory.Memory `json:"memory"`
				Created bool          `json:"created"`
			}{m, created})
		}
		fmt.Fprintln(out, termsafe.Line(memory.FormatSaved(m, created)))
	case "search":
		rs, err := api.Search(ctx, memory.Query{Text: strings.Join(words, " "), Mode: f.mode, Filter: filter})
		if err != nil {
			return err
		}
		if f.json {
			return memJSON(out, memNonNil(rs))
		}
		if len(rs) == 0 {
			fmt.Fprintln(env.Stderr, "relay memory: nothing found")
		}
		for _, r := range rs {
			fmt.Fprintln(out, termsafe.Line(memory.FormatLine(r.Memory, now)))
		}
	case "list":
		ms, err := api.List(ctx, filter)
		if err != nil {
			return err
		}
		if f.json {
			return memJSON(out, memNonNil(ms))
		}
		for _, m := range ms {
			fmt.Fprintln(out, termsafe.Line(memory.FormatLine(m, now)))
		}
	case "get", "forget":
		get := api.Get
		if verb == "forget" {
			get = api.Forget
		}
		m, err := get(ctx, words[0])
		if err != nil {
			return err
		}
		switch {
		case f.json:
			return memJSON(out, m)
		case verb == "get":
			fmt.Fprintln(out, termsafe.Text(memory.FormatMemory(m, now)))
		default:
			fmt.Fprintln(out, termsafe.Line(memory.FormatForgotten(m)))
		}
	case "export":
		return api.Export(ctx, out)
	case "import":
		in, name := env.Stdin, "stdin"
		if len(words) == 1 && words[0] != "-" {
			file, err := os.Open(words[0])
			if err != nil {
				return err
			}
			defer file.Close()
			in, name = file, words[0]
		}
		added, skipped, err := api.Import(ctx, in)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if f.json {
			return memJSON(out, map[string]int{"added": added, "skipped": skipped})
		}
		fmt.Fprintf(out, "imported %d %s from %s (%d already there)\n", added, memPlural(added, "memory", "memories"), termsafe.Line(name), skipped)
	}
	return nil
}

// openMemory returns the hub's memory service when a hub runs and serves
// it, else the store file in RELAY_HOME, saying so on stderr. done closes
// what was opened. With readOnly, a store that does not exist yet is not
// created (nor the state folder): an empty one stands in for it.
func openMemory(ctx context.Context, env *Env, hf *hubFlags, readOnly bool) (api memory.API, workspace string, done func(), err error) {
	o, err := busOptions(ctx, env, hf, false)
	err0 := err
	workspace = o.Workspace
	if workspace == "" {
		workspace = bus.DefaultWorkspace
	}
	var why string
	switch {
	case errors.Is(err, hub.ErrNoHub):
		why = "no hub running"
	case err != nil:
		return nil, "", nil, err
	default:
		nc, err := memConnect(ctx, o)
		if err != nil {
			return nil, "", nil, err
		}
		c := hubdial.Memory(nc)
		pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err = c.List(pctx, memory.Filter{Limit: 1})
		cancel()
		if err == nil {
			return c, workspace, nc.Close, nil
		}
		nc.Close()
		if !errors.Is(err, memory.ErrNoService) {
			return nil, "", nil, err
		}
		why = "the hub serves no memory"
	}
	if readOnly && errors.Is(err0, hub.ErrNoHub) {
		if api, done, ok := emptyMemory(env); ok {
			return api, workspace, done, nil
		}
	}
	home, err := env.EnsureHome()
	if err != nil {
		return nil, "", nil, err
	}
	path := memory.DefaultPath(home)
	mc, err := memoryConfig(env)
	if err != nil {
		return nil, "", nil, err
	}
	st, closeStore, err := localMemory(env, path, mc)
	if err != nil {
		return nil, "", nil, err
	}
	fmt.Fprintf(env.Stderr, "relay: %s; using %s directly\n", why, termsafe.Line(path))
	return st, workspace, func() { closeStore() }, nil
}

// memConnect connects to the hub of o for plain request/reply.
func memConnect(ctx context.Context, o bus.Options) (*nats.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return bus.Dial(cctx, o, "relay memory")
}

// memParseArgs parses flags that may come before, between or after
// the positional words, which it returns; "--" ends the flags.
func memParseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var words []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return words, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(words, rest...), nil
		}
		words, args = append(words, rest[0]), rest[1:]
	}
}

func memJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// memNonNil makes an empty result print as [] rather than null.
func memNonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func memPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// emptyMemory is an empty store in a temporary folder, for reading when
// RELAY_HOME holds no memory store: reading never creates one. ok is false
// when there is a store to read.
func emptyMemory(env *Env) (api memory.API, done func(), ok bool) {
	home, err := env.Home()
	if err != nil {
		return nil, nil, false
	}
	if _, err := os.Stat(memory.DefaultPath(home)); !errors.Is(err, os.ErrNotExist) {
		return nil, nil, false
	}
	tmp, err := os.MkdirTemp("", "relay-memory-")
	if err != nil {
		return nil, nil, false
	}
	st, err := memory.Open(filepath.Join(tmp, "memory.db"), nil)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, nil, false
	}
	fmt.Fprintf(env.Stderr, "relay: no hub running and no memories in %s yet\n", termsafe.Line(home))
	return st, func() { st.Close(); os.RemoveAll(tmp) }, true
}
