package bus_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestNewID: ids are valid names, 22 characters, and share nothing that
// would let one predict the next (a NUID keeps a 12-character prefix and
// steps its sequence by a fixed increment).
func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	prefixes := map[string]bool{}
	for range 2000 {
		id := bus.NewID()
		if err := bus.ValidName("message id", id); err != nil || len(id) != 22 {
			t.Fatalf("NewID = %q (%d bytes): %v", id, len(id), err)
		}
		if seen[id] {
			t.Fatalf("NewID repeated %q", id)
		}
		seen[id] = true
		prefixes[id[:12]] = true
	}
	if len(prefixes) < 1990 {
		t.Fatalf("2000 ids have only %d distinct 12-character prefixes", len(prefixes))
	}
}

// agentConn connects to h with the credential the hub issues agent name,
// as the agent's own relay commands do (the identity file).
func agentConn(t *testing.T, h *hub.Hub, name string) jetstream.JetStream {
	t.Helper()
	cred, err := h.Issue("default", name)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(h.URL(), nats.Token(cred.Token), nats.CustomInboxPrefix(cred.InboxPrefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// flood publishes, with js (Mallory's own credential, on her own
// subject), one envelope to Bob per Nats-Msg-Id in ids.
func flood(t *testing.T, js jetstream.JetStream, ids []string) {
	t.Helper()
	for _, id := range ids {
		env := bus.Envelope{ID: bus.SafeName(id, "x"), Workspace: "default", From: "Mallory", To: "Bob", Body: "flood", Created: time.Now().UTC(), Kind: bus.KindMessage}
		data, _ := json.Marshal(env)
		msg := &nats.Msg{Subject: bus.SenderInboxSubject("default", "Bob", "Mallory"), Data: data, Header: nats.Header{}}
		msg.Header.Set(jetstream.MsgIDHeader, id)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := js.PublishMsg(ctx, msg)
		cancel()
		if err != nil {
			t.Fatalf("publish as Mallory with Nats-Msg-Id %q: %v", id, err)
		}
	}
}

// nuidNext lists the ids a NUID generator gives after a and b, two of
// its ids in a row: the same prefix, the sequence stepped by b-a each time
// (k steps for k-1 ids given to others in between).
func nuidNext(a, b string, n int) []string {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	if len(a) != 22 || len(b) != 22 || a[:12] != b[:12] {
		return nil
	}
	seq := func(s string) int64 {
		var v int64
		for i := 0; i < len(s); i++ {
			v = v*62 + int64(strings.IndexByte(digits, s[i]))
		}
		return v
	}
	sa, sb := seq(a[12:]), seq(b[12:])
	inc := sb - sa
	var out []string
	for k := int64(1); k <= int64(n) && inc > 0; k++ {
		v := sb + k*inc
		buf := make([]byte, 10)
		for i := 9; i >= 0; i-- {
			buf[i] = digits[v%62]
			v /= 62
		}
		out = append(out, b[:12]+string(buf))
	}
	return out
}

// TestPredictedIDFlood: Mallory, with only her own credential, publishes
// envelopes on her own subject carrying as Nats-Msg-Id the ids she
// predicts Alice will use next (from two ids of Alice's she received), and
// the one id she knows Alice will use; every message Alice then sends Bob
// is stored and arrives.
func TestPredictedIDFlood(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "Alice")
	bob := register(t, h, "Bob")
	mallory := register(t, h, "Mallory")
	js := agentConn(t, h, "Mallory")

	seen := &collector{}
	inbox(t, mallory, seen)
	ctx := context.Background()
	for _, b := range []string{"hi 1", "hi 2"} {
		if _, err := alice.Send(ctx, "Mallory", b); err != nil {
			t.Fatal(err)
		}
	}
	seen.waitBodies(t, "hi 1", "hi 2")
	got := seen.deliveries()
	predicted := nuidNext(got[0].Envelope.ID, got[1].Envelope.ID, 64)
	const known = "agreed-id-1"
	flood(t, js, append(predicted, known, "Alice/"+known, known+".Bob", "Alice/"+known+"/x"))

	col := &collector{}
	inbox(t, bob, col)
	want := []string{"one", "two", "three"}
	for _, b := range want {
		if _, err := alice.Send(ctx, "Bob", b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := alice.SendMessage(ctx, bus.Message{ID: known, To: "Bob", Body: "known"}); err != nil {
		t.Fatal(err)
	}
	want = append(want, "known")
	fromAlice := func() []string {
		var out []string
		for _, d := range col.deliveries() {
			if d.Envelope.From == "Alice" {
				out = append(out, d.Envelope.Body)
			}
		}
		return out
	}
	testutil.Eventually(t, func() error {
		if got := fromAlice(); strings.Join(got, ",") != strings.Join(want, ",") {
			return testutil.Errorf("Bob got from Alice %q, want %q", got, want)
		}
		return nil
	})
	// The log shows Alice's message with the id Mallory used apart from
	// Mallory's.
	var entries []bus.Entry
	if err := alice.Log(ctx, bus.LogOptions{ID: known}, func(e bus.Entry) error {
		entries = append(entries, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	froms := map[string]string{}
	for _, e := range entries {
		froms[e.From] = e.Body
	}
	if froms["Alice"] != "known" || froms["Mallory"] != "flood" || len(entries) != 2 {
		t.Fatalf("relay log --id %s = %+v; want Alice's and Mallory's messages apart", known, entries)
	}
	var alices []bus.Entry
	if err := alice.Log(ctx, bus.LogOptions{ID: known, From: "Alice", Last: 1}, func(e bus.Entry) error {
		alices = append(alices, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(alices) != 1 || alices[0].Body != "known" {
		t.Fatalf("log of id %s from Alice = %+v; want Alice's message alone", known, alices)
	}
}
