package bus_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/relayhq/relay/bus"
)

// stats are the numbers of one latency run.
type stats struct{ p50, p99, rate float64 }

// report adds p50, p99 (in µs) and msgs/s to b from one latency per
// message, and, against a floor measured in the same run, the ratios.
func report(b *testing.B, lat []time.Duration, elapsed time.Duration, floor *stats) stats {
	slices.Sort(lat)
	if len(lat) == 0 {
		return stats{}
	}
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Nanoseconds()) / 1e3 }
	s := stats{q(0.50), q(0.99), float64(len(lat)) / elapsed.Seconds()}
	b.ReportMetric(s.p50, "p50-µs")
	b.ReportMetric(s.p99, "p99-µs")
	b.ReportMetric(s.rate, "msgs/s")
	if floor != nil && floor.p50 > 0 {
		b.ReportMetric(s.p50/floor.p50, "p50-x-floor")
		b.ReportMetric(s.p99/floor.p99, "p99-x-floor")
	}
	return s
}

// BenchmarkSendReceive measures a message from Send to the recipient's
// inbox handler (stored in JetStream, delivered, acknowledged), one at a
// time (latency) and with 16 in flight (throughput), beside a raw NATS
// request/reply on the same hub as the floor, measured first in the same
// run. Bars: p99 < 5 ms, >= 10,000 msgs/s.
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

	var floor stats
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
		floor = report(b, lat, time.Since(start), nil)
	})

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
		report(b, lat, time.Since(start), &floor)
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
		rate := float64(n) / time.Since(start).Seconds()
		b.ReportMetric(rate, "msgs/s")
		if floor.rate > 0 {
			b.ReportMetric(rate/floor.rate, "rate-x-floor")
		}
	})

}

// BenchmarkLogLast reads the last 50 messages of a 20,000-message history
// (relay log -n 50, a dashboard opening) beside reading the whole history,
// the baseline, in the same run; "x-whole" is the ratio of their times.
func BenchmarkLogLast(b *testing.B) {
	h := startHub(b)
	ctx := context.Background()
	alice := register(b, h, "alice")
	register(b, h, "bob")
	for i := range 20_000 {
		if _, err := alice.Send(ctx, "bob", "message "+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
	read := func(b *testing.B, o bus.LogOptions, want int) time.Duration {
		start := time.Now()
		for b.Loop() {
			n := 0
			if err := alice.Log(ctx, o, func(bus.Entry) error { n++; return nil }); err != nil || n != want {
				b.Fatalf("read %d messages, %v; want %d", n, err, want)
			}
		}
		per := time.Since(start) / time.Duration(b.N)
		b.ReportMetric(float64(per.Microseconds())/1e3, "ms/read")
		return per
	}
	var whole time.Duration
	b.Run("whole", func(b *testing.B) { whole = read(b, bus.LogOptions{}, 20_000) })
	b.Run("last-50", func(b *testing.B) {
		per := read(b, bus.LogOptions{Last: 50}, 50)
		if whole > 0 {
			b.ReportMetric(float64(per)/float64(whole), "x-whole")
		}
	})
}
