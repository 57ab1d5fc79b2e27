package relay_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/relayhq/relay"
)

// TestRegistrationRefusals checks that On, Pattern and Override refuse at
// registration what would never run as meant, with a clear error.
func TestRegistrationRefusals(t *testing.T) {
	r, err := relay.New(relay.Options{Home: t.TempDir(), Hub: relay.NoHub})
	if err != nil {
		t.Fatal(err)
	}
	ok := func(context.Context, relay.EventInfo) (relay.Result, error) { return relay.Result{}, nil }
	okPattern := func(context.Context, relay.Match) (relay.Result, error) { return relay.Result{}, nil }
	tests := []struct {
		name     string
		err      error
		sentinel error
		says     string
	}{
		{"On sessionStart", r.On("sessionStart", ok), relay.ErrUnknownEvent, "did you mean SessionStart?"},
		{"On onSessionStart", r.On("onSessionStart", ok), relay.ErrUnknownEvent, "did you mean SessionStart?"},
		{"On made-up event", r.On("Started", ok), relay.ErrUnknownEvent, "want one of SessionStart"},
		{"On nil handler", r.On(relay.Idle, nil), relay.ErrNilHandler, "Idle"},
		{"Pattern nil handler", r.Pattern("x", nil), relay.ErrNilHandler, `"x"`},
		{"Override a user namespace", r.Override("deploy", okPattern), relay.ErrNotBuiltin, "relay, broadcast or memory"},
		{"Override nil handler", r.Override("memory", nil), relay.ErrNilHandler, "memory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !errors.Is(tc.err, tc.sentinel) || !strings.Contains(tc.err.Error(), tc.says) {
				t.Errorf("error %v, want %v saying %q", tc.err, tc.sentinel, tc.says)
			}
		})
	}
	for _, ev := range relay.Events() {
		if err := r.On(ev, ok); err != nil {
			t.Errorf("On(%s): %v", ev, err)
		}
	}
	if err := r.Override("Memory", okPattern); err != nil {
		t.Errorf("Override(Memory): %v", err)
	}
	if err := r.Pattern("deploy", okPattern); err != nil {
		t.Errorf("Pattern(deploy): %v", err)
	}
}

// ExampleRelay_Override plugs a memory backend of one's own in place of
// relay's memory store.
func ExampleRelay_Override() {
	r, _ := relay.New(relay.Options{Home: os.TempDir() + "/relay-example", Hub: relay.NoHub})
	err := r.Override("memory", func(ctx context.Context, m relay.Match) (relay.Result, error) {
		// m.Target is the verb (save, search, list, forget), m.Body its text.
		return relay.Result{Inject: "my store has nothing on " + m.Body, Stop: true}, nil
	})
	fmt.Println(err)
	// Output: <nil>
}
