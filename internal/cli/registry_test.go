package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/agents/registry"
)

// TestEveryRegisteredCLIIsListed: what relay's commands say about the
// agent CLIs comes from the registry, so a CLI added there needs no edit
// here. Every profile is offered by wrap's and scan's --profile; doctor
// looks for every profile's program (its help names them, and on an empty
// PATH each is "not found"); relay mcp's help names every CLI whose
// profile registers the MCP server, relay hook's every CLI that runs it.
func TestEveryRegisteredCLIIsListed(t *testing.T) {
	t.Parallel()
	help := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := runConfigCLI(t, nil, args...)
		if code != ExitOK {
			t.Fatalf("relay %s: exit %d, %s", strings.Join(args, " "), code, stderr)
		}
		return stdout
	}
	wrap, scan, doctor := help("wrap", "-h"), help("scan", "-h"), help("doctor", "-h")
	mcp, hook := help("mcp", "-h"), help("hook", "-h")

	env, out, errb := doctorEnv(t.TempDir(), map[string]string{"RELAY_HOME": privateDir(t)})
	Main([]string{"doctor", "--json"}, env)
	var rep doctorReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s%s", err, out, errb)
	}
	names := strings.Join(registry.Names(), ", ")
	if !strings.Contains(wrap, names) || !strings.Contains(scan, names) {
		t.Errorf("wrap's or scan's help does not offer every profile (%s):\n%s\n%s", names, wrap, scan)
	}
	if cmds := "(" + strings.Join(registry.Commands(), ", ") + ")"; !strings.Contains(doctor, cmds) {
		t.Errorf("doctor's help does not name every program %s:\n%s", cmds, doctor)
	}
	mcpCLIs, hookCLIs := 0, 0
	for _, p := range registry.All() {
		t.Run(p.Name, func(t *testing.T) {
			if len(p.Commands) > 0 && !slices.Contains(rep.NotFound, p.Commands[0]) {
				t.Errorf("doctor does not look for %q on PATH: not found %v", p.Commands[0], rep.NotFound)
			}
			if p.MCP != strings.Contains(mcp, p.CLI) {
				t.Errorf("relay mcp's help names %q: %v, its profile's MCP: %v", p.CLI, !p.MCP, p.MCP)
			}
			if p.HookCommand != strings.Contains(hook, p.CLI) {
				t.Errorf("relay hook's help names %q: %v, its profile's HookCommand: %v", p.CLI, !p.HookCommand, p.HookCommand)
			}
		})
		if p.MCP {
			mcpCLIs++
		}
		if p.HookCommand {
			hookCLIs++
		}
	}
	if mcpCLIs < 3 || hookCLIs < 3 {
		t.Errorf("%d CLIs register MCP and %d run relay hook: want 3 or more each", mcpCLIs, hookCLIs)
	}
}
