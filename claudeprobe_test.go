package relay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClaudeHooksOK(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		ok        bool
		why       string
	}{
		{"current", "2.1.328 (Claude Code)", true, ""},
		{"old", "1.0.44 (Claude Code)", false, "older than 2.0"},
		{"garbage", "hello", false, "cannot read the version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, "claude")
			if err := os.WriteFile(bin, []byte("#!/bin/sh\necho '"+tc.out+"'\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			s := &session{o: Options{Home: t.TempDir()}}
			ok, why := s.claudeHooksOK(bin)
			if ok != tc.ok || !strings.Contains(why, tc.why) {
				t.Fatalf("got %v %q", ok, why)
			}
			// Asked again, the remembered answer is the same.
			if ok2, why2 := s.claudeHooksOK(bin); ok2 != ok || why2 != why {
				t.Fatalf("second answer %v %q", ok2, why2)
			}
		})
	}
}
