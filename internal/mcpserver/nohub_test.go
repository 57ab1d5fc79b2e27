package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/hub"
)

// TestNoHubIsHubs: a tool's error when the hub cannot be reached wraps
// hub.ErrNoHub, the one declaration of it (issue 33: mcpserver declared
// its own), whether the cause already says so or not.
func TestNoHubIsHubs(t *testing.T) {
	t.Parallel()
	for _, cause := range []error{
		errors.New("dial tcp 127.0.0.1:1: connection refused"),
		fmt.Errorf("%w; start one with `relay up --detach`", hub.ErrNoHub),
	} {
		s, err := New(Options{Name: "Alice", Connect: func(context.Context) (Team, error) { return Team{}, cause }})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.connect(context.Background())
		if !errors.Is(err, hub.ErrNoHub) || !errors.Is(err, cause) || strings.Count(err.Error(), hub.ErrNoHub.Error()) != 1 {
			t.Errorf("connect failing with %q: %v, want it wrapped once in hub.ErrNoHub", cause, err)
		}
	}
}
