package bus

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A client's start asks the hub about two streams: the workspace's (does it
// exist, has it every subject) and its presence bucket's (are rollups and
// purges refused). jetstream's Stream answers with the whole StreamInfo,
// and decoding it built encoding/json's decoders for a few dozen types by
// reflection, in every new process: 2-4 % of `relay wrap -- true`'s CPU
// (issue 34). A streamBrief holds only what the start reads; the whole
// info is fetched when something must change (a stream made by an older
// relay, a bucket not yet guarded), which is rare.

// jsAPIStreamInfo is the JetStream API subject of a stream's info, under
// the API prefix of jetstream.New (no domain).
const jsAPIStreamInfo = "$JS.API.STREAM.INFO."

// streamBrief is the part of a STREAM.INFO answer that a client's start
// reads.
type streamBrief struct {
	Error  *jetstream.APIError `json:"error,omitempty"`
	Config struct {
		Subjects    []string `json:"subjects,omitempty"`
		AllowRollup bool     `json:"allow_rollup_hdrs,omitempty"`
		DenyDelete  bool     `json:"deny_delete,omitempty"`
		DenyPurge   bool     `json:"deny_purge,omitempty"`
		// A presence bucket's (presenceKV): what jetstream's KeyValue
		// checks and chooses its requests by.
		MaxMsgsPerSubject int64     `json:"max_msgs_per_subject"`
		AllowDirect       bool      `json:"allow_direct,omitempty"`
		Mirror            *struct{} `json:"mirror,omitempty"`
	} `json:"config"`
}

// streamBrief asks the hub about stream name. An answer with an error is
// returned as its *jetstream.APIError, which errors.Is matches against
// jetstream's errors (jetstream.ErrStreamNotFound, ...) by code.
func (c *Client) streamBrief(ctx context.Context, name string) (streamBrief, error) {
	var b streamBrief
	if _, ok := ctx.Deadline(); !ok { // as jetstream's own requests
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
	}
	m, err := c.nc.RequestWithContext(ctx, jsAPIStreamInfo+name, nil)
	if err != nil {
		return b, err
	}
	if err := json.Unmarshal(m.Data, &b); err != nil {
		return b, fmt.Errorf("stream %s: %w: %w", name, jetstream.ErrInvalidJetStreamResponse, err)
	}
	if b.Error != nil {
		return b, b.Error
	}
	return b, nil
}
