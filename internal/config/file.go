package config

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/relayhq/relay/internal/lazyre"
	"reflect"
	"sort"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// fileConfig is one file as written: every field optional (nil when
// absent). Its toml tags are the file format; docs/config.schema.json
// mirrors them and a test keeps the two equal.
type fileConfig struct {
	Name      *string       `toml:"name"`
	Workspace *string       `toml:"workspace"`
	Hub       *fileHub      `toml:"hub"`
	Profile   *string       `toml:"profile"`
	MCP       *bool         `toml:"mcp"`
	Delivery  *fileDelivery `toml:"delivery"`
	Damping   *fileDamping  `toml:"damping"`
	Memory    *fileMemory   `toml:"memory"`
	// Patterns is decoded by decodePatterns: each value is one table
	// ([patterns.NAME]) or a list of them ([[patterns.NAME]]).
	Patterns map[string]any         `toml:"patterns"`
	Hooks    map[string][]fileGroup `toml:"hooks"`
}

type fileHub struct {
	URL       *string `toml:"url"`
	TokenFile *string `toml:"token_file"`
	Creds     *string `toml:"creds"`
	TLSCA     *string `toml:"tls_ca"`
}

type fileDelivery struct {
	Mode         *string `toml:"mode"`
	IdleQuietMS  *int64  `toml:"idle_quiet_ms"`
	HumanQuietMS *int64  `toml:"human_quiet_ms"`
	MaxBodyBytes *int64  `toml:"max_body_bytes"`
	StuckAfter   any     `toml:"stuck_after"` // a duration, as fileDamping's
}

// Durations are `any`: a string such as "30s", or an integer number of
// seconds as in Claude Code's hook timeouts. validate checks them.
type fileDamping struct {
	PairWindow  any    `toml:"pair_window"`
	PairMax     *int64 `toml:"pair_max"`
	AgentWindow any    `toml:"agent_window"`
	AgentMax    *int64 `toml:"agent_max"`
	MaxHops     *int64 `toml:"max_hops"`
}

type fileMemory struct {
	LoadAtStart *int64        `toml:"load_at_start"`
	PromptOnEnd *bool         `toml:"prompt_on_end"`
	Backend     *string       `toml:"backend"`
	Embedder    *fileEmbedder `toml:"embedder"`
	Qdrant      *fileQdrant   `toml:"qdrant"`
}

// Commands are `any`: a string (run by sh -c) or a list of strings (argv).
type filePattern struct {
	Command  any       `toml:"command"`
	Timeout  any       `toml:"timeout"`
	Allow    *[]string `toml:"allow"`
	Cwd      *string   `toml:"cwd"`
	Inject   *bool     `toml:"inject"`
	Override *bool     `toml:"override"`
}

type fileGroup struct {
	Matcher *string    `toml:"matcher"`
	Hooks   []fileHook `toml:"hooks"`
	// Idle only: the quiet time before it fires, the time between
	// repeats while the agent stays idle, and how many times at most.
	After any    `toml:"after"`
	Every any    `toml:"every"`
	Max   *int64 `toml:"max"`
}

type fileHook struct {
	Type       *string `toml:"type"`
	Command    any     `toml:"command"`
	Timeout    any     `toml:"timeout"`
	Neutralize *bool   `toml:"neutralize"`
}

// pos is a 1-based place in a file.
type pos struct{ Line, Col int }

// positions maps a key path (`hooks.SessionStart[0].hooks[1].command`) to
// the place of its key in the file, so that checks after decoding can
// still name a line.
type positions map[string]pos

// parsedFile is one decoded file with the places of its keys.
type parsedFile struct {
	name     string
	data     fileConfig
	pos      positions
	patterns []filePatterns // decoded from data.Patterns, in file order
}

// at returns an *Error placed at key's position in the file.
func (f *parsedFile) errAt(key, format string, args ...any) *Error {
	p, ok := f.pos[key]
	if !ok {
		p = f.pos[key+"[0]"] // an array of tables: its first header
	}
	return &Error{File: f.name, Line: p.Line, Col: p.Col, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// source returns the Source of key in this file.
func (f *parsedFile) source(key string) Source {
	p, ok := f.pos[key]
	if !ok {
		p = f.pos[key+"[0]"]
	}
	return Source{Kind: FromFile, File: f.name, Line: p.Line, Col: p.Col}
}

// parseFile decodes one file's bytes. Syntax and type errors stop at the
// first (the decoder cannot go on: the file is nil); unknown keys are all
// reported, each with the nearest valid key when one is close, and the
// file is returned for its other values to be checked.
func parseFile(name string, data []byte) (*parsedFile, Errors) {
	f := &parsedFile{name: name}
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	err := dec.Decode(&f.data)
	var strict *toml.StrictMissingError
	var de *toml.DecodeError
	switch {
	case err == nil:
	case errors.As(err, &strict):
		var es Errors
		for i := range strict.Errors {
			e := &strict.Errors[i]
			line, col := e.Position()
			key := []string(e.Key())
			msg := "unknown key"
			if len(key) > 0 {
				msg += didYouMean(key[len(key)-1], keysAt(key[:len(key)-1]))
			}
			es = append(es, &Error{File: name, Line: line, Col: col, Key: strings.Join(key, "."), Msg: msg})
		}
		// The rest of the file was decoded: check it too, so that one run
		// reports every mistake.
		f.pos = index(data)
		return f, append(es, f.decodePatterns()...)
	case errors.As(err, &de):
		line, col := de.Position()
		return nil, Errors{{File: name, Line: line, Col: col, Key: strings.Join(de.Key(), "."), Msg: decodeMessage(de)}}
	default:
		return nil, Errors{{File: name, Msg: err.Error()}}
	}
	f.pos = index(data)
	return f, f.decodePatterns()
}

var typeErrRE = lazyre.New(`^toml: cannot decode TOML (\w+(?: \w+)?) into (?:struct field \S+ of type )?(\S+)$`)

// decodeMessage turns go-toml's message into the user's words: Go type
// names become TOML ones.
func decodeMessage(de *toml.DecodeError) string {
	msg := de.Error()
	if m := typeErrRE().FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("wrong type: want %s, have %s", tomlTypeName(m[2]), article(m[1]))
	}
	if strings.HasSuffix(msg, "is already defined") {
		return "defined twice"
	}
	return "syntax error: " + strings.TrimPrefix(msg, "toml: ")
}

func tomlTypeName(goType string) string {
	goType = strings.TrimPrefix(goType, "*")
	switch {
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "int"):
		return "an integer"
	case goType == "[]string":
		return "a list of strings"
	case strings.HasPrefix(goType, "[]"):
		return "a list of tables"
	default:
		return "a table"
	}
}

func article(tomlType string) string {
	switch tomlType[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + tomlType
	}
	return "a " + tomlType
}

// keysAt lists the keys valid in the table at path (map keys and list
// indices skipped), for suggestions.
func keysAt(path []string) []string {
	return keysIn(reflect.TypeOf(fileConfig{}), path)
}

// keysIn is keysAt for the file format t (a struct with toml tags).
func keysIn(t reflect.Type, path []string) []string {
	for _, part := range path {
		t = deref(t)
		switch t.Kind() {
		case reflect.Struct:
			f, ok := fieldByTag(t, part)
			if !ok {
				return nil
			}
			t = f.Type
		case reflect.Map, reflect.Slice:
			t = t.Elem()
			// A map's key is this part; the element type serves the next.
			if deref(t).Kind() == reflect.Slice {
				t = deref(t).Elem()
			}
		default:
			return nil
		}
	}
	t = deref(t)
	for t.Kind() == reflect.Map || t.Kind() == reflect.Slice {
		t = deref(t.Elem())
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := 0; i < t.NumField(); i++ {
		out = append(out, tagName(t.Field(i)))
	}
	return out
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func tagName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	return name
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		if tagName(t.Field(i)) == name {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

// index walks the document (already known to parse) and records where
// each key is. Arrays of tables get [i] suffixes, counted as TOML does.
func index(data []byte) positions {
	ps := positions{}
	p := unstable.Parser{}
	p.Reset(data)
	lines := lineStarts(data)
	arrays := map[string]int{} // array-of-tables path -> last index
	var table string           // current table's resolved path
	resolve := func(parts []string) string {
		var path string
		for i, part := range parts {
			if i > 0 {
				path += "."
			}
			path += part
			if n, ok := arrays[path]; ok && i < len(parts)-1 {
				path += "[" + strconv.Itoa(n) + "]"
			}
		}
		return path
	}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			parts, first := keyParts(e)
			path := resolve(parts)
			if e.Kind == unstable.ArrayTable {
				n, ok := arrays[path]
				if ok {
					n++
				}
				arrays[path] = n
				path += "[" + strconv.Itoa(n) + "]"
			}
			table = path
			ps[path] = placeIn(lines, first)
		case unstable.KeyValue:
			parts, first := keyParts(e)
			path := join(table, strings.Join(parts, "."))
			ps[path] = placeIn(lines, first)
			indexValue(lines, ps, path, e.Value())
		}
	}
	return ps
}

// indexValue records the keys inside inline tables and arrays of them.
func indexValue(lines []int, ps positions, path string, v *unstable.Node) {
	switch v.Kind {
	case unstable.Array:
		it := v.Children()
		for i := 0; it.Next(); i++ {
			el := it.Node()
			elPath := path + "[" + strconv.Itoa(i) + "]"
			if _, ok := ps[elPath]; !ok {
				ps[elPath] = ps[path]
			}
			indexValue(lines, ps, elPath, el)
		}
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			kv := it.Node()
			if kv.Kind != unstable.KeyValue {
				continue
			}
			parts, first := keyParts(kv)
			kpath := join(path, strings.Join(parts, "."))
			ps[kpath] = placeIn(lines, first)
			indexValue(lines, ps, kpath, kv.Value())
		}
	}
}

func keyParts(n *unstable.Node) ([]string, *unstable.Node) {
	var parts []string
	var first *unstable.Node
	it := n.Key()
	for it.Next() {
		k := it.Node()
		if first == nil {
			first = k
		}
		parts = append(parts, string(k.Data))
	}
	return parts, first
}

// lineStarts returns the offset at which each line of data starts.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// placeIn returns the line and column (in bytes, as go-toml counts them)
// of a node. Looking the offset up in the line starts keeps indexing
// linear in the file's size (unstable.Parser.Shape scans from the start).
func placeIn(lines []int, n *unstable.Node) pos {
	if n == nil {
		return pos{}
	}
	off := int(n.Raw.Offset)
	i := sort.Search(len(lines), func(i int) bool { return lines[i] > off }) - 1
	return pos{Line: i + 1, Col: off - lines[i] + 1}
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}
