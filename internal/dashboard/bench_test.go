package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/dashboard"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/hub/hubtest"
)

// BenchmarkFeed measures a message from Send until a follower sees it:
// "log" is the baseline (bus.Log with Follow, as relay log --follow reads),
// "websocket" the dashboard's feed to a websocket client. Compare the two
// ns/op: their ratio is what the dashboard adds.
//
//	go test -run '^$' -bench BenchmarkFeed -benchtime 2000x ./internal/dashboard/
func BenchmarkFeed(b *testing.B) {
	b.Run("log", func(b *testing.B) {
		h, alice := benchTeam(b)
		seen := make(chan string, 1024)
		lctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go benchClient(b, h.URL(), h.Token(), "").Log(lctx, bus.LogOptions{Follow: true}, func(e bus.Entry) error {
			seen <- e.Body
			return nil
		})
		benchSend(b, alice, seen)
	})
	b.Run("websocket", func(b *testing.B) {
		h, alice := benchTeam(b)
		d, err := dashboard.New(dashboard.Options{URL: h.URL(), Token: h.Token()})
		if err != nil {
			b.Fatal(err)
		}
		defer d.Close()
		ws := "ws" + strings.TrimPrefix(d.URL(), "http") + "ws"
		conn, _, err := websocket.DefaultDialer.Dial(ws, http.Header{"Authorization": {"Bearer " + h.Token()}})
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		seen := make(chan string, 1024)
		go func() {
			defer close(seen)
			for {
				_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
				var f dashboard.Frame
				if err := conn.ReadJSON(&f); err != nil {
					return
				}
				if f.Type == dashboard.TypeMessage {
					seen <- f.Message.Body
				}
			}
		}()
		benchSend(b, alice, seen)
	})
}

// benchTeam starts a hub of its own with alice and bob registered.
func benchTeam(b *testing.B) (*hub.Hub, *bus.Client) {
	h := hubtest.Start(b)
	alice := benchClient(b, h.URL(), h.Token(), "alice")
	if err := alice.Register(context.Background()); err != nil {
		b.Fatal(err)
	}
	if err := benchClient(b, h.URL(), h.Token(), "bob").Register(context.Background()); err != nil {
		b.Fatal(err)
	}
	return h, alice
}

func benchClient(b *testing.B, url, token, name string) *bus.Client {
	c, err := bus.Connect(context.Background(), bus.Options{URL: url, Token: token, Name: name})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// benchSend sends b.N messages from alice to bob, each once the follower
// saw the one before.
func benchSend(b *testing.B, alice *bus.Client, seen <-chan string) {
	body := strings.Repeat("benchmark message ", 10)
	b.ResetTimer()
	for i := range b.N {
		want := fmt.Sprint(body, i)
		if _, err := alice.Send(context.Background(), "bob", want); err != nil {
			b.Fatal(err)
		}
		for got := range seen {
			if got == want {
				break
			}
		}
	}
}
