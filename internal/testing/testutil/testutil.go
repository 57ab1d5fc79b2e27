// Package testutil holds helpers shared by the tests of every package:
// polling with deadlines instead of sleeping, and temporary state folders.
package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// WaitFor calls check every step until it returns nil or total has passed,
// then fails the test with the last error. It is the only way tests wait.
func WaitFor(t testing.TB, total, step time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(total)
	var err error
	for {
		if err = check(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing after %v: %v", total, err)
		}
		time.Sleep(step)
	}
}

// Eventually is WaitFor with a 10 s budget polled every 20 ms.
func Eventually(t testing.TB, check func() error) {
	t.Helper()
	WaitFor(t, 10*time.Second, 20*time.Millisecond, check)
}

// Home returns a fresh RELAY_HOME folder (mode 0700) removed with the test.
func Home(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "relay-home")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Errorf is fmt.Errorf, re-exported so that check functions read well:
// return testutil.Errorf("want %d agents, have %d", want, got).
func Errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
