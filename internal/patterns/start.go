package patterns

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxPrefix bounds how far into a line the start rule looks for the '@'
// (past white space and glyphs), so a 1 MB line of spaces costs little.
const maxPrefix = 256

// maxTarget bounds a target; a longer run of non-space characters is not a
// target but noise.
const maxTarget = 256

type startKind uint8

const (
	startNone    startKind = iota // not a command
	startCommand                  // a registered command
	startEscaped                  // "\@ns:" with a registered namespace: shown, never routed
)

// start is what the line-start rule found.
type start struct {
	kind   startKind
	ns     string
	target string
	rest   string // text after the target, leading white space removed
	block  bool   // rest is "<<<"
	indent int    // columns before the '@' (or the escape), for block dedent
}

// start applies the line-start rule to one line.
func (x *Extractor) start(line string) start {
	// Skip white space and glyphs, counting columns.
	i, cols := 0, 0
	for i < len(line) && i < maxPrefix {
		r, size := utf8.DecodeRuneInString(line[i:])
		if r == '\t' {
			cols += 4 - cols%4
		} else if unicode.IsSpace(r) || isGlyph(r) {
			cols++
		} else {
			break
		}
		i += size
	}
	if i >= len(line) {
		return start{}
	}
	rest := line[i:]
	kind := startCommand
	if rest[0] == '\\' {
		rest = strings.TrimLeft(rest, "\\")
		kind = startEscaped
	}
	if len(rest) < 3 || rest[0] != '@' {
		return start{}
	}
	colon := -1
	for k := 1; k < len(rest) && k <= 65; k++ {
		if rest[k] == ':' {
			colon = k
			break
		}
	}
	if colon < 0 {
		return start{}
	}
	name := rest[1:colon]
	if !validNamespace(name) || !x.ns.Has(name) {
		return start{}
	}
	if kind == startEscaped {
		return start{kind: startEscaped}
	}
	st := start{kind: startCommand, ns: strings.ToLower(name), indent: cols}
	after := clean(rest[colon+1:])
	if st.ns != NSBroadcast {
		end := strings.IndexFunc(after, unicode.IsSpace)
		if end < 0 {
			end = len(after)
		}
		if end > maxTarget {
			return start{}
		}
		st.target = strings.TrimRight(after[:end], ",;:")
		after = after[end:]
	}
	st.rest = strings.TrimSpace(after)
	st.block = st.rest == "<<<"
	if st.block {
		st.rest = ""
	}
	return st
}
