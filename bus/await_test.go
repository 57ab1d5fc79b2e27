package bus_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestAwaitStages: a message's stages reach the log in order with their
// times, Await returns once the stage waited for is reached (with the
// answer's text for answered), and names the last stage and its reason
// when the wait ends first.
func TestAwaitStages(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	bob := register(t, h, "bob")
	ctx := context.Background()
	env, err := alice.Send(ctx, "bob", "what is 6*7?")
	if err != nil {
		t.Fatal(err)
	}
	var col collector
	col.noAck = true
	stop := inbox(t, bob, &col)
	defer stop()
	col.waitBodies(t, "what is 6*7?")
	d := col.deliveries()[0]

	short := func(want bus.Status) ([]bus.Outcome, error) {
		sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		return alice.Await(sctx, env, want)
	}
	if err := d.PostReceipt(bus.StatusHeld, "busy: it goes in when the agent's turn ends"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, func() error {
		_, err := short(bus.StatusSeen)
		if !errors.Is(err, bus.ErrNotReached) || !strings.Contains(err.Error(), "bob: held (busy: it goes in") {
			return testutil.Errorf("await seen while held: %v", err)
		}
		return nil
	})

	if err := d.AckWithReceipt(bus.StatusDelivered, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Await(ctx, env, bus.StatusDelivered); err != nil {
		t.Fatal(err)
	}
	if err := d.PostReceipt(bus.StatusSeen, "transcript"); err != nil {
		t.Fatal(err)
	}
	answer, err := bob.SendMessage(ctx, bus.Message{To: "alice", Body: "42", ReplyTo: env.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := bob.PostAnswered(env, answer); err != nil {
		t.Fatal(err)
	}
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	outs, err := alice.Await(actx, env, bus.StatusAnswered)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Answer == nil || outs[0].Answer.Answer != "42" || outs[0].Answer.AnswerID != answer.ID {
		t.Fatalf("outcomes %+v, want bob's answer 42", outs)
	}

	var e bus.Entry
	if err := alice.Log(ctx, bus.LogOptions{ID: env.ID}, func(x bus.Entry) error { e = x; return nil }); err != nil {
		t.Fatal(err)
	}
	var got []string
	var last time.Time
	for _, s := range e.Stages {
		got = append(got, string(s.Stage))
		if s.At.Before(last) {
			t.Errorf("stage %s at %v, before the one before it (%v)", s.Stage, s.At, last)
		}
		last = s.At
	}
	want := "queued held delivered seen answered"
	if strings.Join(got, " ") != want {
		t.Errorf("stages %q, want %q", strings.Join(got, " "), want)
	}
	if e.Status["bob"] != bus.StatusAnswered {
		t.Errorf("status %q, want answered", e.Status["bob"])
	}
}

// TestAwaitBroadcast: a broadcast is awaited at every recipient, and the
// wait names each one that did not reach the stage.
func TestAwaitBroadcast(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	bob := register(t, h, "bob")
	register(t, h, "carol")
	ctx := context.Background()
	env, err := alice.Send(ctx, bus.Broadcast, "hello all")
	if err != nil {
		t.Fatal(err)
	}
	var col collector
	col.noAck = true
	stop := inbox(t, bob, &col)
	defer stop()
	col.waitBodies(t, "hello all")
	if err := col.deliveries()[0].AckWithReceipt(bus.StatusDelivered, ""); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, func() error {
		sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		outs, err := alice.Await(sctx, env, bus.StatusDelivered)
		if !errors.Is(err, bus.ErrNotReached) || !strings.Contains(err.Error(), "carol: queued") || strings.Contains(err.Error(), "bob") {
			return testutil.Errorf("await delivered: %v", err)
		}
		if len(outs) != 2 || !outs[0].Reached || outs[0].Agent != "bob" || outs[1].Reached {
			return testutil.Errorf("outcomes %+v, want bob reached and carol not", outs)
		}
		return nil
	})
}
