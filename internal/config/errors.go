package config

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/relayhq/relay/internal/termsafe"
)

// ErrInvalid is wrapped by every error that Load returns for bad
// configuration (as opposed to an unreadable file): callers branch on it to
// exit with a usage status.
var ErrInvalid = errors.New("invalid configuration")

// Error is one mistake in the configuration, placed as precisely as is
// known. File is the path of the file ("" for the environment and flags),
// Line and Col are 1-based (0 when unknown), Key is the dotted key
// (`delivery.mode`), an environment variable (`RELAY_HUB`) or a flag
// (`--hub`).
type Error struct {
	File string
	Line int
	Col  int
	Key  string
	Msg  string
}

// Error formats the mistake as FILE:LINE:COL: KEY: MSG, leaving out what is
// unknown. The file's path and the key are shown through termsafe.Line: a
// quoted key such as "\u001b[2J" in a committed file is printed as \x1b[2J,
// never sent to the terminal that runs relay config check.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(termsafe.Line(e.File))
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
			if e.Col > 0 {
				fmt.Fprintf(&b, ":%d", e.Col)
			}
		}
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(termsafe.Line(e.Key))
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Is makes every *Error match ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Errors is every mistake found in one Load, in file order. errors.As finds
// the first *Error in it.
type Errors []*Error

// Error prints one mistake per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap gives errors.Is and errors.As access to each mistake.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// sortErrors orders mistakes by file, then line and column, keeping the
// order of discovery among equals.
func sortErrors(es Errors) {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.File != b.File {
			return false // files keep the order they were read in
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

// suggest returns the candidate nearest to word by edit distance (case
// ignored), or "" when none is close enough to be a likely typo.
func suggest(word string, candidates []string) string {
	best, bestD := "", -1
	w := strings.ToLower(word)
	for _, c := range candidates {
		d := editDistance(w, strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	limit := max(2, len(word)/3)
	if bestD < 0 || bestD > limit || bestD >= len(word) {
		return ""
	}
	return best
}

// didYouMean formats a suggestion as ` (did you mean "x"?)`, or "".
func didYouMean(word string, candidates []string) string {
	if s := suggest(word, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// hint is didYouMean, or else ` (want WANT)`.
func hint(word string, candidates []string, want string) string {
	if s := didYouMean(word, candidates); s != "" {
		return s
	}
	return " (want " + want + ")"
}

// editDistance is the Levenshtein distance between a and b, counted in
// runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
