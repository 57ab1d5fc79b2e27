package config

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
)

// filePatterns is one namespace's handlers as one file writes them: one
// table ([patterns.NAME], list false) or a list of tables
// ([[patterns.NAME]], list true), in file order.
type filePatterns struct {
	raw      string // the name as written
	list     bool
	handlers []*filePattern
}

// decodePatterns turns the raw `patterns` tables into filePatterns, strictly:
// an unknown key or a value of the wrong type is an *Error at its place in
// the file, as for every other table.
func (f *parsedFile) decodePatterns() Errors {
	names := make([]string, 0, len(f.data.Patterns))
	for n := range f.data.Patterns {
		names = append(names, n)
	}
	// Definition order: by line in the file.
	line := func(n string) int {
		p, ok := f.pos["patterns."+n]
		if !ok {
			p = f.pos["patterns."+n+"[0]"]
		}
		return p.Line
	}
	sort.Slice(names, func(i, j int) bool {
		if li, lj := line(names[i]), line(names[j]); li != lj {
			return li < lj
		}
		return names[i] < names[j]
	})
	var errs Errors
	for _, n := range names {
		key := "patterns." + n
		fp := filePatterns{raw: n}
		switch v := f.data.Patterns[n].(type) {
		case map[string]any:
			h, es := f.decodePattern(key, v)
			errs = append(errs, es...)
			fp.handlers = append(fp.handlers, h)
		case []any:
			fp.list = true
			for i, el := range v {
				ekey := fmt.Sprintf("%s[%d]", key, i)
				m, ok := el.(map[string]any)
				if !ok {
					errs = append(errs, f.errAt(ekey, "wrong type: want a table, have %s", tomlKind(el)))
					continue
				}
				h, es := f.decodePattern(ekey, m)
				errs = append(errs, es...)
				fp.handlers = append(fp.handlers, h) // nil keeps the index of the next
			}
		default:
			errs = append(errs, f.errAt(key, "wrong type: want a table ([patterns.%s]) or a list of tables ([[patterns.%s]]), have %s", n, n, tomlKind(v)))
			continue
		}
		f.patterns = append(f.patterns, fp)
	}
	return errs
}

// decodePattern decodes one handler's table (at key) strictly. Unknown keys
// are all reported; the handler is still returned with the keys it knew,
// so that its other values are checked too.
func (f *parsedFile) decodePattern(key string, m map[string]any) (*filePattern, Errors) {
	h := &filePattern{}
	b, err := toml.Marshal(m)
	if err != nil {
		return h, Errors{f.errAt(key, "%v", err)}
	}
	err = toml.NewDecoder(bytes.NewReader(b)).DisallowUnknownFields().Decode(h)
	var strict *toml.StrictMissingError
	var de *toml.DecodeError
	switch {
	case err == nil:
		return h, nil
	case errors.As(err, &strict):
		var es Errors
		for i := range strict.Errors {
			k := []string(strict.Errors[i].Key())
			es = append(es, f.errAt(key+"."+strings.Join(k, "."), "unknown key%s", didYouMean(k[len(k)-1], patternKeys())))
		}
		return h, es
	case errors.As(err, &de):
		// nil: the handler is left out, so that its mistake is not also
		// reported as a missing command.
		return nil, Errors{f.errAt(key+"."+strings.Join(de.Key(), "."), "%s", decodeMessage(de))}
	default:
		return nil, Errors{f.errAt(key, "%v", err)}
	}
}

// patternKeys are the keys of a [patterns.NAME] table.
func patternKeys() []string {
	t := reflect.TypeOf(filePattern{})
	out := make([]string, 0, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		out = append(out, tagName(t.Field(i)))
	}
	return out
}

// patterns applies the file's handlers. A [patterns.NAME] table merges key
// by key into the namespace's first handler (so that a project's
// config.local.toml can change one key of the project's handler); each
// table of [[patterns.NAME]] adds a handler after the ones already
// defined. A built-in namespace (relay, broadcast, memory) may have
// handlers too: they run after relay's own, or in its place with
// override = true.
func (a *applier) patterns() {
	for _, fps := range a.f.patterns {
		name := strings.ToLower(fps.raw)
		tkey := "patterns." + fps.raw
		if !namespaceRE.MatchString(name) {
			a.fail(tkey, "%q is not a namespace name (a letter, then letters, digits, '_' or '-', at most 64)", fps.raw)
			continue
		}
		for i, fp := range fps.handlers {
			if fp == nil {
				continue // its mistake is reported
			}
			hkey := tkey
			if fps.list {
				hkey = fmt.Sprintf("%s[%d]", tkey, i)
			}
			idx, ok := a.pat[name]
			if fps.list || !ok {
				idx = len(a.c.Patterns)
				n := a.handlers(name)
				if !ok {
					a.pat[name] = idx
				}
				p := defaultPattern(name, a.f.source(hkey))
				p.Key = "patterns." + name
				if n > 0 {
					p.Key = fmt.Sprintf("patterns.%s[%d]", name, n)
				}
				a.c.Patterns = append(a.c.Patterns, p)
			}
			a.pattern(&a.c.Patterns[idx], hkey, fp)
		}
	}
}

// handlers counts the handlers of namespace name defined so far.
func (a *applier) handlers(name string) int {
	n := 0
	for _, p := range a.c.Patterns {
		if p.Name == name {
			n++
		}
	}
	return n
}

// pattern applies one handler's table (at tkey in the file) onto p.
func (a *applier) pattern(p *Pattern, tkey string, fp *filePattern) {
	setFrom := func(field string) { a.c.sources[p.Key+"."+field] = a.f.source(tkey + "." + field) }
	if fp.Command != nil {
		a.setCmd[p.Key] = struct{}{} // a bad command is reported once, not also as missing
		if cmd, ok := a.command(tkey+".command", fp.Command); ok {
			p.Command = cmd
			setFrom("command")
		}
	}
	if fp.Timeout != nil {
		if d, msg := parseDuration(fp.Timeout); msg != "" {
			a.fail(tkey+".timeout", "%s", msg)
		} else {
			p.Timeout = d
			setFrom("timeout")
		}
	}
	if fp.Allow != nil {
		ok := true
		for _, n := range *fp.Allow {
			if n != "*" && !nameRE.MatchString(n) {
				a.fail(tkey+".allow", "%q is not an agent name", n)
				ok = false
			}
		}
		if ok {
			p.Allow = append([]string(nil), *fp.Allow...)
			setFrom("allow")
		}
	}
	if fp.Cwd != nil {
		if dir, ok := a.file(tkey+".cwd", *fp.Cwd, true); ok {
			p.Cwd = dir
			setFrom("cwd")
		}
	}
	if fp.Inject != nil {
		p.Inject = *fp.Inject
		setFrom("inject")
	}
	if fp.Override != nil {
		if *fp.Override && !isBuiltin(p.Name) {
			a.fail(tkey+".override", "override applies to the built-in namespaces (relay, broadcast, memory) only; @%s: has no built-in handler to replace", p.Name)
		} else {
			p.Override = *fp.Override
			setFrom("override")
		}
	}
}
