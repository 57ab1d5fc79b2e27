package bus_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
)

// Two agents on an embedded hub: alice sends, bob reads his inbox,
// reports the message delivered and acknowledges it.
func Example() {
	home, err := os.MkdirTemp("", "relay-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(home)
	ctx := context.Background()

	h, err := hub.Start(ctx, hub.Options{Home: home, Listen: "127.0.0.1:0"})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Shutdown()

	join := func(name string) *bus.Client {
		c, err := bus.Connect(ctx, bus.Options{URL: h.URL(), Token: h.Token(), Name: name})
		if err != nil {
			log.Fatal(err)
		}
		if err := c.Register(ctx); err != nil {
			log.Fatal(err)
		}
		return c
	}
	alice, bob := join("alice"), join("bob")
	defer alice.Close()
	defer bob.Close()

	if _, err := alice.Send(ctx, "bob", "Please run the integration tests"); err != nil {
		log.Fatal(err)
	}

	inboxCtx, stop := context.WithCancel(ctx)
	err = bob.Inbox(inboxCtx, func(ctx context.Context, d *bus.Delivery) {
		fmt.Printf("%s -> %s: %s\n", d.Envelope.From, d.Envelope.To, d.Envelope.Body)
		_ = d.Receipt(ctx, bus.StatusDelivered, "")
		_ = d.Ack()
		stop()
	})
	if err != nil {
		log.Fatal(err)
	}

	_ = alice.Log(ctx, bus.LogOptions{}, func(e bus.Entry) error {
		fmt.Printf("log: %s to %s: %s\n", e.From, e.To, e.Status["bob"])
		return nil
	})
	// Output:
	// alice -> bob: Please run the integration tests
	// log: alice to bob: delivered
}
