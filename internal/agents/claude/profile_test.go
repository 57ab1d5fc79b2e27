package claude

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents"
)

// TestTooOld: relay uses the hooks of Claude Code 2.x and later only, and
// says why not otherwise; the version is asked once per binary.
func TestTooOld(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		why       string
	}{
		{"current", "2.1.328 (Claude Code)", ""},
		{"old", "1.0.44 (Claude Code)", "older than 2.0"},
		{"garbage", "hello", "cannot read the version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, "claude")
			if err := os.WriteFile(bin, []byte("#!/bin/sh\necho '"+tc.out+"'\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			home := t.TempDir()
			v, err := agents.CachedVersion(context.Background(), home, bin)
			if err != nil {
				t.Fatal(err)
			}
			why, _ := TooOld(v)
			if (tc.why == "") != (why == "") || !strings.Contains(why, tc.why) {
				t.Fatalf("TooOld(%q) = %q, want %q", v, why, tc.why)
			}
			// Asked again, the remembered answer is the same.
			v2, err := agents.CachedVersion(context.Background(), home, bin)
			if err != nil || v2 != v {
				t.Fatalf("second answer %q, %v; want %q", v2, err, v)
			}
			if m, _ := filepath.Glob(filepath.Join(home, "cache", "version-*")); len(m) != 1 {
				t.Fatalf("cache files %v; want one", m)
			}
		})
	}
}

// TestSettleShort: the pause between a paste and its Enter stays a small
// margin (relay waits for the input box to show the paste first): it is
// part of every typed message's way to the model.
func TestSettleShort(t *testing.T) {
	if s := Profile().Settle; s > 50*time.Millisecond {
		t.Fatalf("Claude Code's Settle is %v; want at most 50 ms", s)
	}
}
