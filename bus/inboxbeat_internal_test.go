package bus

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/relayhq/relay/internal/hub/hubtest"
)

// TestPullHeartbeatOf: an inbox on a single hub is confirmed twice a
// pull (an idle wrapper's wake-ups, issue 34); on a cluster's node every
// pullHeartbeat, which bounds the stall after a node with the inbox's
// pull dies (TestInboxSurvivesItsLeaderNode).
func TestPullHeartbeatOf(t *testing.T) {
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
		name string
		url  string
		opts []nats.Option
		want time.Duration
	}{
		{"single hub", h.URL(), []nats.Option{nats.Token(h.Token())}, pullHeartbeatAlone},
		{"one node of a cluster", srvs[0].ClientURL(), nil, pullHeartbeat},
		{"every node of a cluster", strings.Join(urls, ","), nil, pullHeartbeat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nc, err := nats.Connect(tt.url, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			if got := pullHeartbeatOf(nc); got != tt.want {
				t.Errorf("pullHeartbeatOf = %v, want %v", got, tt.want)
			}
		})
	}
	if pullHeartbeatAlone > pullExpiry/2 {
		t.Errorf("pullHeartbeatAlone %v: the client refuses a heartbeat over half the expiry %v", pullHeartbeatAlone, pullExpiry)
	}
}
