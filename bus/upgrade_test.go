package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/relayhq/relay/bus"
)

// TestOlderStreamGainsSenderSubjects: a workspace stream and an inbox
// consumer made by an older relay (inbox subjects without a sender, one
// filter) are brought up to date when clients join: a message queued the
// old way still arrives, and one sent the new way (with the sender in the
// subject) too, in order.
func TestOlderStreamGainsSenderSubjects(t *testing.T) {
	h := startHub(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	nc, err := nats.Connect(h.URL(), nats.Token(h.Token()))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: bus.StreamName("default"), Subjects: []string{"relay.default.inbox.*", "relay.default.receipt.*"},
		Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: "bob", FilterSubject: "relay.default.inbox.bob", AckPolicy: jetstream.AckExplicitPolicy,
	}); err != nil {
		t.Fatal(err)
	}
	old := `{"id":"old1","workspace":"default","from":"alice","to":"bob","body":"queued by an older relay"}`
	if _, err := js.Publish(ctx, "relay.default.inbox.bob", []byte(old)); err != nil {
		t.Fatal(err)
	}
	bob := register(t, h, "bob")
	alice := register(t, h, "alice")
	if _, err := alice.Send(ctx, "bob", "sent with the sender in the subject"); err != nil {
		t.Fatal(err)
	}
	col := &collector{}
	inbox(t, bob, col)
	col.waitBodies(t, "queued by an older relay", "sent with the sender in the subject")
}
