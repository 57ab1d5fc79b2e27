package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/mockmodel"
)

// TestOpenCodeDirectDelivery: a peer's message reaches a wrapped
// OpenCode's model through OpenCode's own server (prompt_async on the
// port and password relay gave it), once, while the human's half-typed
// text stays in its input box as it was. Typed delivery could not do it:
// it waits for the human's draft to go (and would put relay's text in the
// human's line), so with the server path gone the model never gets the
// message while the draft is there.
func TestOpenCodeDirectDelivery(t *testing.T) {
	t.Parallel()
	tm := newTeam(t)
	const (
		body  = "Dave here: the staging database is back, carry on"
		draft = "halfway through my own note"
	)
	carol := tm.screenCLI("opencode", "Carol", func(mockmodel.Request) mockmodel.Reply {
		return mockmodel.Reply{Text: "OK."}
	})
	// The human types without pressing Enter.
	carol.term.Type(draft)
	if _, err := carol.term.WaitScreen(60*time.Second, func(s string) bool { return inputHolds(s, draft) }); err != nil {
		t.Fatalf("the human's draft is not in OpenCode's input box: %v", err)
	}
	// Counted before the send: relay send may return only once the
	// message is delivered, and then the model may have it already.
	before := len(carol.model.Turns())
	sent := time.Now()
	if out, err := tm.relay("send", "Carol", body); err != nil {
		t.Fatalf("relay send: %v\n%s", err, out)
	}
	carol.waitTurn(t, body, 240*time.Second)
	t.Logf("from relay send to OpenCode's model: %v", time.Since(sent).Round(100*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if _, err := carol.model.WaitReplied(ctx, before+1); err != nil {
		t.Fatal(err)
	}
	// Its turn is over (the screen idle again) with the draft intact:
	// nothing was typed into the human's line.
	if _, err := carol.term.WaitScreen(120*time.Second, func(s string) bool {
		return inputHolds(s, draft) && !strings.Contains(s, "esc interrupt")
	}); err != nil {
		t.Fatalf("after the delivery the input box does not hold the human's draft alone: %v\nlog:\n%s", err, carol.log())
	}
	if n := carol.turnsWith(body); n != 1 {
		t.Errorf("OpenCode's model got the message %d times, want 1", n)
	}
	if log := carol.log(); !strings.Contains(log, "delivered through the CLI's own input") {
		t.Errorf("the wrapper did not deliver through OpenCode's server:\n%s", log)
	}
}

// inputHolds reports whether OpenCode's input box (the last run of rows
// framed by "┃") holds exactly text on its first row.
func inputHolds(screen, text string) bool {
	rows := strings.Split(screen, "\n")
	end := -1
	for i := len(rows) - 1; i >= 0; i-- {
		if strings.HasPrefix(strings.TrimSpace(rows[i]), "┃") {
			end = i
			break
		}
	}
	if end < 0 {
		return false
	}
	start := end
	for start > 0 && strings.HasPrefix(strings.TrimSpace(rows[start-1]), "┃") {
		start--
	}
	box := ""
	for _, r := range rows[start:end] { // its last row is the agent and model line
		box += strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(r), "┃")) + " "
	}
	return strings.TrimSpace(box) == text
}
