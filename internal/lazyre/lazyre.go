// Package lazyre compiles a package's regular expressions at their first
// use, not in its init: every relay command links every package, and a
// wrapper's start-up pays for each init it runs (issue 34).
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr the first time it is called
// (panicking, as regexp.MustCompile does, when expr is not valid) and
// returns the same *regexp.Regexp each time; safe for concurrent use.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
