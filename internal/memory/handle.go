package memory

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Verbs is the help line listing the @memory: verbs Handle knows.
const Verbs = "@memory:save TEXT [#tag…] | @memory:search WORDS | @memory:list [N] | @memory:get ID | @memory:forget ID"

// Limits of the agent verbs.
const (
	handleListDefault = 10 // @memory:list without N
	handleListMax     = 50 // the most @memory:list N shows
)

// Handle runs one @memory: command written by agent in workspace and
// returns the reply to type back into it. verb is the command's target
// (save, search, list, get, forget; case does not matter) and body its
// text.
//
// The reply is never empty: on failure it is a short notice (FormatError)
// and err is the cause, for the caller's log. Usage mistakes (no text, an
// unknown verb, a bad N) wrap ErrInvalid.
//
// save: trailing #words are tags ("Use pnpm #build #js" saves "Use pnpm"
// tagged build and js); a # word followed by other words stays text. Saves
// are workspace-scoped and authored by agent. search and list see the
// workspace's memories, the global ones, and agent's own private ones.
// forget removes any memory the agent can see.
func Handle(ctx context.Context, api API, agent, workspace, verb, body string) (string, error) {
	verb = strings.ToLower(strings.TrimSpace(verb))
	body = strings.TrimSpace(body)
	now := time.Now()
	visible := Filter{Workspace: workspace, Viewer: agent}
	fail := func(err error) (string, error) { return FormatError(verb, err), err }
	usage := func(format string, args ...any) (string, error) {
		return fail(fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...)))
	}
	switch verb {
	case "save":
		text, tags := SplitTags(body)
		if text == "" {
			return usage("nothing to save; write @memory:save TEXT [#tag…]")
		}
		m, created, err := api.Save(ctx, Memory{Text: text, Tags: tags, Author: agent, Workspace: workspace, Scope: ScopeWorkspace})
		if err != nil {
			return fail(err)
		}
		return FormatSaved(m, created), nil
	case "search":
		if len(queryTerms(body)) == 0 {
			return usage("no words to search for; write @memory:search WORDS")
		}
		rs, err := api.Search(ctx, Query{Text: body, Filter: visible})
		if err != nil {
			return fail(err)
		}
		return FormatResults(body, rs, now), nil
	case "list":
		n := handleListDefault
		if body != "" {
			v, err := strconv.Atoi(strings.Fields(body)[0])
			if err != nil || v < 1 {
				return usage("%q is not a count; write @memory:list or @memory:list N", strings.Fields(body)[0])
			}
			n = min(v, handleListMax)
		}
		visible.Limit = n
		ms, err := api.List(ctx, visible)
		if err != nil {
			return fail(err)
		}
		return FormatList(ms, now), nil
	case "get", "forget":
		if body == "" {
			return usage("which memory? write @memory:%s ID", verb)
		}
		id := strings.Fields(body)[0]
		m, err := api.Get(ctx, id)
		if err == nil && !canSee(m, agent, workspace) {
			err = fmt.Errorf("%w: no memory has id %s", ErrNotFound, m.ID)
		}
		if err != nil {
			return fail(err)
		}
		if verb == "get" {
			return FormatMemory(m, now), nil
		}
		if m, err = api.Forget(ctx, m.ID); err != nil {
			return fail(err)
		}
		return FormatForgotten(m), nil
	case "", "help":
		return "memory verbs: " + Verbs, nil
	}
	return usage("unknown verb %q; the verbs are %s", verb, Verbs)
}

// canSee applies a Filter{Workspace, Viewer} to one memory.
func canSee(m Memory, agent, workspace string) bool {
	if workspace != "" && m.Workspace != workspace && m.Scope != ScopeGlobal {
		return false
	}
	return agent == "" || m.Scope != ScopeAgent || m.Author == agent
}

// SplitTags takes the trailing #tag words off text: "Use pnpm #build #js"
// gives "Use pnpm" and [build js]. A tag starts with a letter; "#42" and a
// # word with text after it stay text.
func SplitTags(text string) (string, []string) {
	fields := strings.Fields(text)
	i := len(fields)
	for i > 0 && isTag(fields[i-1]) {
		i--
	}
	if i == len(fields) {
		return strings.TrimSpace(text), nil
	}
	tags := NormalizeTags(fields[i:])
	// Cut text before the first tag, keeping its own spacing.
	rest := strings.TrimSpace(text)
	for range len(fields) - i {
		rest = strings.TrimSpace(rest[:strings.LastIndex(rest, "#")])
	}
	return rest, tags
}

func isTag(w string) bool {
	r := []rune(w)
	if len(r) < 2 || r[0] != '#' || !unicode.IsLetter(r[1]) {
		return false
	}
	for _, c := range r[1:] {
		if !unicode.IsLetter(c) && !unicode.IsNumber(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// Relevant returns up to n memories to give an agent at the start of a
// session in project (a folder path): first those that match the words of
// the folder's name, then the workspace's newest. Agent-scoped memories are
// left out (the primer is not per agent).
func Relevant(ctx context.Context, api API, workspace, project string, n int) ([]Memory, error) {
	if n <= 0 {
		return nil, nil
	}
	var out []Memory
	seen := map[string]bool{}
	add := func(m Memory) {
		if len(out) < n && !seen[m.ID] && m.Scope != ScopeAgent {
			seen[m.ID] = true
			out = append(out, m)
		}
	}
	f := Filter{Workspace: workspace, Limit: n + 10}
	if name := filepath.Base(filepath.Clean(project)); project != "" && name != "." && name != string(filepath.Separator) {
		words := strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
		rs, err := api.Search(ctx, Query{Text: strings.Join(words, " "), Filter: f})
		if err != nil {
			return nil, fmt.Errorf("memories for %s: %w", project, err)
		}
		for _, r := range rs {
			add(r.Memory)
		}
	}
	if len(out) < n {
		ms, err := api.List(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("memories for %s: %w", project, err)
		}
		for _, m := range ms {
			add(m)
		}
	}
	return out, nil
}

// IsUsage reports whether err is the caller's mistake (ErrInvalid or
// ErrNotFound) rather than a failure of the store or the service.
func IsUsage(err error) bool {
	return errors.Is(err, ErrInvalid) || errors.Is(err, ErrNotFound)
}
