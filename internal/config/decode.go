package config

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
)

// Positions maps a key path of a decoded file (`agent[1].command`, with an
// index for each array of tables) to where its key is, so that a check
// after decoding can name a line.
type Positions struct {
	file string
	pos  positions
}

// ErrAt returns an *Error at key's place in the file (the first header of
// an array of tables for the array's own path; the file alone when the key
// is not in it).
func (p Positions) ErrAt(key, format string, args ...any) *Error {
	at, ok := p.pos[key]
	if !ok {
		at = p.pos[key+"[0]"]
	}
	return &Error{File: p.file, Line: at.Line, Col: at.Col, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// Decoded reports whether the file was decoded (no syntax or type error).
func (p Positions) Decoded() bool { return p.pos != nil }

// Has reports whether key is written in the file.
func (p Positions) Has(key string) bool {
	_, ok := p.pos[key]
	return ok
}

// Decode decodes one TOML file of another format than relay's
// configuration (such as .relay/team.toml) into v, a pointer to a struct
// whose toml tags are the format, with this package's errors: FILE:LINE:COL,
// every unknown key at once with the nearest valid one ("did you mean"),
// Go types named as TOML types. A syntax or type error stops decoding
// (returned alone); after unknown keys the rest of v is decoded and the
// positions are returned so that the caller can check it too.
func Decode(name string, data []byte, v any) (Positions, Errors) {
	ps := Positions{file: name}
	err := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields().Decode(v)
	var strict *toml.StrictMissingError
	var de *toml.DecodeError
	switch {
	case err == nil:
	case errors.As(err, &strict):
		var es Errors
		root := reflect.TypeOf(v)
		for i := range strict.Errors {
			e := &strict.Errors[i]
			line, col := e.Position()
			key := []string(e.Key())
			msg := "unknown key"
			if len(key) > 0 {
				msg += didYouMean(key[len(key)-1], keysIn(root, key[:len(key)-1]))
			}
			es = append(es, &Error{File: name, Line: line, Col: col, Key: strings.Join(key, "."), Msg: msg})
		}
		ps.pos = index(data)
		return ps, es
	case errors.As(err, &de):
		line, col := de.Position()
		return ps, Errors{{File: name, Line: line, Col: col, Key: strings.Join(de.Key(), "."), Msg: decodeMessage(de)}}
	default:
		return ps, Errors{{File: name, Msg: err.Error()}}
	}
	ps.pos = index(data)
	return ps, nil
}

// Sort orders es by line and column, keeping the order of discovery among
// equals.
func (es Errors) Sort() { sortErrors(es) }

// Suggest returns ` (did you mean "x"?)` for the candidate nearest to word,
// or "" when none is close enough to be a likely typo.
func Suggest(word string, candidates []string) string { return didYouMean(word, candidates) }
