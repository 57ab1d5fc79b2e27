package bus_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/relayhq/relay/bus"
)

// report adds p50, p99 (in µs) and msgs/s to b from one latency per message.
func report(b *testing.B, lat []time.Duration, elapsed time.Duration) {
	slices.Sort(lat)
	if len(lat) == 0 {
		return
	}
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(q(0.50), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "msgs/s")
}

// BenchmarkSendReceive measures a message from Send to the recipient's
// inbox handler (stored in JetStream, delivered, acknowledged), one at a
// time (latency) and with 16 in flight (throughput), beside a raw NATS
// request/reply on the same hub as the floor.
func BenchmarkSendReceive(b *testing.B) {
	h := startHub(b)
	ctx := context.Background()
	alice := register(b, h, "alice")
	bob := register(b, h, "bob")
	got := make(chan time.Time, 1024)
	ictx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = bob.Inbox(ictx, func(_ context.Context, d *bus.Delivery) {
			_ = d.Ack()
			got <- time.Now()
		})
	}()
	defer func() { stop(); <-done }()

	b.Run("bus", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		start := time.Now()
		for b.Loop() {
			t0 := time.Now()
			if _, err := alice.Send(ctx, "bob", "benchmark"); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, (<-got).Sub(t0))
		}
		report(b, lat, time.Since(start))
	})

	b.Run("bus-16-in-flight", func(b *testing.B) {
		const inFlight = 16
		sem := make(chan struct{}, inFlight)
		errs := make(chan error, inFlight)
		start := time.Now()
		n := 0
		for b.Loop() {
			sem <- struct{}{}
			n++
			go func() {
				if _, err := alice.Send(ctx, "bob", "benchmark"); err != nil {
					errs <- err
				}
				<-sem
			}()
		}
		for range n {
			select {
			case <-got:
			case err := <-errs:
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "msgs/s")
	})

	b.Run("nats-request-reply", func(b *testing.B) {
		nc, err := nats.Connect(h.URL(), nats.Token(h.Token()))
		if err != nil {
			b.Fatal(err)
		}
		defer nc.Close()
		sub, err := nc.Subscribe("bench.echo", func(m *nats.Msg) { _ = m.Respond(m.Data) })
		if err != nil {
			b.Fatal(err)
		}
		defer sub.Unsubscribe()
		lat := make([]time.Duration, 0, b.N)
		start := time.Now()
		for b.Loop() {
			t0 := time.Now()
			if _, err := nc.Request("bench.echo", []byte("benchmark"), time.Second); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		report(b, lat, time.Since(start))
	})
}
