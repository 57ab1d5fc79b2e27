package bus

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/relayhq/relay/internal/hub/hubtest"
)

// TestPullTimesOf: an inbox on a single hub pulls for a minute and is
// confirmed twice a pull (an idle wrapper's wake-ups, issue 34); on a
// cluster's node it is confirmed every pullHeartbeat, which bounds the
// stall after a node with the inbox's pull dies
// (TestInboxSurvivesItsLeaderNode).
func TestPullTimesOf(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	h := hubtest.Start(t)
	srvs := hubtest.Cluster(t, 3)
	var urls []string
	for _, s := range srvs {
		urls = append(urls, s.ClientURL())
	}
	tests := []struct {
		name         string
		url          string
		opts         []nats.Option
		expiry, beat time.Duration
	}{
		{"single hub", h.URL(), []nats.Option{nats.Token(h.Token())}, time.Minute, 30 * time.Second},
		{"one node of a cluster", srvs[0].ClientURL(), nil, 30 * time.Second, 2 * time.Second},
		{"every node of a cluster", strings.Join(urls, ","), nil, 30 * time.Second, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nc, err := nats.Connect(tt.url, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			expiry, beat := pullTimesOf(nc)
			if expiry != tt.expiry || beat != tt.beat {
				t.Errorf("pullTimesOf = %v, %v; want %v, %v", expiry, beat, tt.expiry, tt.beat)
			}
			if beat > expiry/2 {
				t.Errorf("heartbeat %v: the client refuses one over half the expiry %v", beat, expiry)
			}
		})
	}
}
