package hooks_test

import (
	"context"
	"os/exec"
	"regexp"
	"testing"

	"github.com/relayhq/relay/internal/hooks"
)

// BenchmarkExecBaseline is the floor for BenchmarkRun: starting `true` with
// os/exec and nothing else.
func BenchmarkExecBaseline(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRun is one hook run: process group, pipes, JSON input, group
// clean-up. Compare with BenchmarkExecBaseline.
func BenchmarkRun(b *testing.B) {
	in := map[string]string{"body": "Release v1.2.3"}
	for b.Loop() {
		if _, err := hooks.Run(context.Background(), hooks.Command{Argv: []string{"true"}}, in, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFireNoMatch is what an Output hook costs for a line it does not
// match: it runs for every line an agent prints.
func BenchmarkFireNoMatch(b *testing.B) {
	c, dir := loadConfig(b, "[[hooks.Output]]\nmatcher = 'FAIL|panic:'\n[[hooks.Output.hooks]]\ncommand = 'true'\n")
	set := hooks.NewSet(c.Hooks, hooks.SetOptions{Dir: dir})
	line := "  ● Running the test suite for the payments service, 412 tests so far, all passing"
	b.ResetTimer()
	for b.Loop() {
		if res, err := set.Fire(context.Background(), "Output", line, nil); err != nil || res.Ran != 0 {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkMatcherBaseline is the floor for BenchmarkFireNoMatch: the
// matcher's regular expression alone.
func BenchmarkMatcherBaseline(b *testing.B) {
	re := regexp.MustCompile("FAIL|panic:")
	line := "  ● Running the test suite for the payments service, 412 tests so far, all passing"
	for b.Loop() {
		if re.MatchString(line) {
			b.Fatal("matched")
		}
	}
}
