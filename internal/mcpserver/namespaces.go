package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/hooks"
)

// NamespaceInput is the arguments of a user namespace's tool: what
// `@NAME:target body` would give its handler.
type NamespaceInput struct {
	Target string `json:"target" jsonschema:"the command's target, as in @NAME:target"`
	Body   string `json:"body,omitempty" jsonschema:"the command's text"`
}

// NamespaceTool is the tool name of user namespace ns: ns itself, or
// ns_ns when ns is the name of a built-in tool.
func NamespaceTool(ns string, builtin []string) string {
	if slices.Contains(builtin, ns) {
		return "ns_" + ns
	}
	return ns
}

// addNamespaceTools adds one tool per configured user namespace, running
// the same handler (hooks.Namespace: the same command, allow list,
// timeout and folder) as `@NAME:target body` would.
func (s *Server) addNamespaceTools() {
	builtin := s.Tools()
	for _, p := range s.o.Patterns {
		ns := hooks.NewNamespace(p, s.o.HandlerEnv)
		name := NamespaceTool(p.Name, builtin)
		desc := fmt.Sprintf("Run the team's @%s: command (a handler configured in relay); its output is the result.", p.Name)
		if len(p.Allow) > 0 && !slices.Contains(p.Allow, "*") {
			desc += " Only for " + strings.Join(p.Allow, ", ") + "."
		}
		addTool(s, name, desc, func(ctx context.Context, in NamespaceInput) (string, error) {
			return s.runNamespace(ctx, ns, in)
		})
	}
}

func (s *Server) runNamespace(ctx context.Context, ns *hooks.Namespace, in NamespaceInput) (string, error) {
	target := strings.TrimSpace(in.Target)
	if strings.ContainsAny(target, " \t\r\n") {
		return "", fmt.Errorf("target %q holds white space: it is one word, as in @%s:target", target, ns.Name())
	}
	out, err := ns.Handle(ctx, hooks.Match{
		Namespace: ns.Name(), Target: target, Body: in.Body,
		Agent: s.o.Name, Workspace: s.o.Workspace, Cwd: s.o.Dir,
	})
	if err != nil {
		return "", err
	}
	if out.Block {
		return "", fmt.Errorf("@%s:%s refused: %s", ns.Name(), target, delivery.Sanitize(out.Reason))
	}
	if strings.TrimSpace(out.Inject) == "" {
		return fmt.Sprintf("@%s:%s ran; it printed nothing for you.", ns.Name(), target), nil
	}
	// A handler's output is text, typed back as for @NAME: lines.
	return delivery.Sanitize(out.Inject), nil
}
