package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// TestRunNoHubNamesTheFix: with no hub, no relay binary and a state folder
// where no hub can start (others can write it), Run fails before the agent
// starts, with ErrNoHub and an error that says how to fix it.
func TestRunNoHubNamesTheFix(t *testing.T) {
	if _, err := LookPath("relay", nil, ""); err == nil {
		t.Skip("a relay binary is on PATH")
	}
	home := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(home, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o777); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), Config{
		Name: "a", Workspace: "default", Home: home, Command: "true", Env: []string{"PATH=/usr/bin:/bin"},
	})
	if !errors.Is(err, ErrNoHub) {
		t.Fatalf("Run: %v, want ErrNoHub", err)
	}
	for _, want := range []string{"relay up --detach", "relay binary on PATH", "Options.Hub", "chmod 700"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
