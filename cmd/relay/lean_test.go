package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// forbidden are packages the lean build (tag lean, which `make install`
// installs as relay) must not link: each one costs every wrapper its file
// pages and its package inits (issue 34, docs/performance.md). Only the
// full binary, relay-hub, runs the hub, the dashboard and the MCP server.
var forbidden = []string{
	"github.com/nats-io/nats-server/v2/server",
	"github.com/google/jsonschema-go/jsonschema",
	"github.com/modelcontextprotocol/go-sdk/mcp",
	"github.com/relayhq/relay/internal/dashboard",
	"github.com/relayhq/relay/internal/mcpserver",
	"github.com/relayhq/relay/internal/team",
}

// deps lists the packages ./cmd/relay links with tags, built as the
// Makefile builds the lean relay (no cgo).
func deps(t *testing.T, tags string) map[string]bool {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-tags", tags, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -tags %q: %v", tags, err)
	}
	set := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		set[p] = true
	}
	return set
}

func TestLeanBuildLinksNoHub(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	tests := []struct {
		name string
		tags string
		want bool // whether the forbidden packages are linked
	}{
		{"lean build links none", "sqlite_fts5 lean", false},
		{"full build links them all", "sqlite_fts5", true}, // the list is not stale
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			linked := deps(t, tt.tags)
			for _, p := range forbidden {
				if linked[p] != tt.want {
					t.Errorf("-tags %q: %s linked = %v, want %v", tt.tags, p, linked[p], tt.want)
				}
			}
		})
	}
}
