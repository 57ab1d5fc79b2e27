package session

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMCPServer: relay mcp is registered with the session's name, unless
// mcp = false, the agent runs alone, or no relay binary can run it.
func TestMCPServer(t *testing.T) {
	relay := filepath.Join(t.TempDir(), "relay")
	if err := os.WriteFile(relay, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cfg  Config
		want bool
	}{
		{"on by default", Config{Executable: relay, Workspace: "w", Home: "/h"}, true},
		{"mcp = false", Config{Executable: relay, NoMCP: true}, false},
		{"alone", Config{Executable: relay, Hub: NoHub}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Session{cfg: c.cfg}
			m := s.mcpServer("Alice")
			if (m != nil) != c.want {
				t.Fatalf("server %+v, want one: %v", m, c.want)
			}
			if m == nil {
				return
			}
			if m.Command != relay || len(m.Args) != 1 || m.Args[0] != "mcp" ||
				m.Env["RELAY_NAME"] != "Alice" || m.Env["RELAY_WORKSPACE"] != "w" || m.Env["RELAY_HOME"] != "/h" {
				t.Errorf("server %+v", m)
			}
			for _, k := range m.PassEnv {
				if _, ok := m.Env[k]; ok {
					t.Errorf("%s is passed by value and by name", k)
				}
			}
		})
	}
}
