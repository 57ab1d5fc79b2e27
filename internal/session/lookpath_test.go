package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestRunCommandNotFound: Run with a command that is not there returns
// ErrCommandNotFound before it starts anything: no hub, no state folder.
func TestRunCommandNotFound(t *testing.T) {
	home := filepath.Join(t.TempDir(), "state")
	_, err := Run(context.Background(), Config{
		Name: "a", Workspace: "default", Home: home, Command: "no-such-agent-cli",
		Env: []string{"PATH=" + t.TempDir()},
	})
	if !errors.Is(err, ErrCommandNotFound) {
		t.Fatalf("Run: %v, want ErrCommandNotFound", err)
	}
	if _, err := os.Stat(home); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Run created %s (stat: %v): it started something", home, err)
	}
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "agent")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "notes")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, cmd, dir string
		env            []string
		want           string // "" for not found
	}{
		{"in PATH", "agent", "", []string{"PATH=/nonexistent:" + dir}, exe},
		{"not in PATH", "agent", "", []string{"PATH=/nonexistent"}, ""},
		{"absolute", exe, "", []string{"PATH="}, exe},
		{"relative to dir", "./agent", dir, nil, exe},
		{"not executable", plain, "", nil, ""},
		{"folder", dir, "", nil, ""},
		{"empty", "", "", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := LookPath(c.cmd, c.env, c.dir)
			if c.want == "" {
				if !errors.Is(err, ErrCommandNotFound) {
					t.Errorf("LookPath(%q) = %q, %v; want ErrCommandNotFound", c.cmd, got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("LookPath(%q) = %q, %v; want %q", c.cmd, got, err, c.want)
			}
		})
	}
}
