//go:build !lean

package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/relayhq/relay/internal/statedir"
)

// The bridge copies relay's streams between the team's hub and its leaves.
//
// Each side stores what its own agents publish in its own JetStream domain,
// so that agents on one side keep talking while the link is down, and a
// message to the other side waits in the sender's side's stream. Each side
// also holds a copy of the other side's messages, receipts and presence:
// a leaf's bridge reads the team hub's streams (through the leaf link, in
// DomainTeam) and the team hub's bridges read each leaf's (in its
// LeafDomain), in order, from where they stopped (the position is kept in
// the hub's folder, bridge-DOMAIN.json), and publish each message into the
// local stream of the same name with the same subject, headers and
// Nats-Msg-Id (a copy made twice within the stream's duplicate window is
// kept once; beyond it, the recipient's journal knows the id). A recipient
// then reads its inbox on its own side, as on one hub.
//
// Loops are cut with the OriginHeader that every copy carries: the team
// hub copies from a leaf only what that leaf's own agents published (no
// origin); a leaf copies from the team hub everything that did not come
// from itself.

// OriginHeader names the JetStream domain a copied message came from.
const OriginHeader = "Relay-Origin"

// bridgedPrefixes are the streams the bridge copies: a workspace's
// messages and receipts (bus.StreamName) and its presence bucket's stream
// (bus.PresenceBucket).
var bridgedPrefixes = [...]string{"RELAY_", "KV_relay_presence_"}

func bridged(stream string) bool {
	for _, p := range bridgedPrefixes {
		if strings.HasPrefix(stream, p) {
			return true
		}
	}
	return false
}

// bridges are a hub's copiers, one per remote domain.
type bridges struct {
	h   *Hub
	log *slog.Logger
	nc  *nats.Conn

	mu   sync.Mutex
	by   map[string]context.CancelFunc // remote domain
	wg   sync.WaitGroup
	done bool
}

// startBridges connects the bridges to the hub and starts one for the team
// hub (on a leaf) or for each invited leaf (on the team's hub).
func (h *Hub) startBridges(log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	nc, err := nats.Connect("", nats.InProcessServer(h.srv), nats.Token(h.token), nats.Name("relay-hub-bridge"),
		nats.MaxReconnects(-1))
	if err != nil {
		return fmt.Errorf("bridge: %w", err)
	}
	h.bridges = &bridges{h: h, log: log.With("from", "bridge"), nc: nc, by: map[string]context.CancelFunc{}}
	if h.join != nil {
		h.bridges.add(DomainTeam)
		return nil
	}
	h.auth.mu.Lock()
	var domains []string
	for m := range h.auth.leaves.by {
		domains = append(domains, LeafDomain(m))
	}
	h.auth.mu.Unlock()
	for _, d := range domains {
		h.bridges.add(d)
	}
	return nil
}

// add starts copying from remote domain d, unless it runs already.
func (b *bridges) add(d string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done || b.by[d] != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.by[d] = cancel
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		b.run(ctx, d)
	}()
}

// remove stops copying from d and forgets where it was.
func (b *bridges) remove(d string) {
	b.mu.Lock()
	cancel := b.by[d]
	delete(b.by, d)
	b.mu.Unlock()
	if cancel != nil {
		cancel()
		_ = os.Remove(b.posPath(d))
	}
}

func (b *bridges) stop() {
	b.mu.Lock()
	b.done = true
	for _, cancel := range b.by {
		cancel()
	}
	b.mu.Unlock()
	b.wg.Wait()
	b.nc.Close()
}

func (b *bridges) posPath(d string) string {
	return filepath.Join(Dir(b.h.home), "bridge-"+d+".json")
}

// run lists domain d's streams every second and copies each of relay's.
func (b *bridges) run(ctx context.Context, d string) {
	remote, err := jetstream.NewWithDomain(b.nc, d)
	if err != nil {
		b.log.Error("bridge", "domain", d, "err", err)
		return
	}
	local, err := jetstream.New(b.nc)
	if err != nil {
		b.log.Error("bridge", "domain", d, "err", err)
		return
	}
	c := &copier{b: b, domain: d, remote: remote, local: local, pos: map[string]uint64{}}
	c.loadPos()
	started := map[string]bool{}
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		names := remote.StreamNames(lctx)
		for n := range names.Name() {
			if bridged(n) && !started[n] {
				started[n] = true
				wg.Add(1)
				go func() {
					defer wg.Done()
					c.copyStream(ctx, n)
				}()
			}
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// copier copies the streams of one remote domain.
type copier struct {
	b             *bridges
	domain        string
	remote, local jetstream.JetStream

	mu  sync.Mutex
	pos map[string]uint64 // stream → last remote sequence copied
}

func (c *copier) loadPos() {
	b, err := statedir.ReadSecret(c.b.posPath(c.domain))
	if err != nil {
		return
	}
	_ = json.Unmarshal(b, &c.pos) // a bad file: copy again from the start; ids de-duplicate
}

func (c *copier) setPos(stream string, seq uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pos[stream] = seq
	b, _ := json.Marshal(c.pos)
	return writeFileAtomic(c.b.posPath(c.domain), b)
}

func (c *copier) getPos(stream string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pos[stream]
}

// copyStream copies stream until ctx ends, starting again after a failure
// (the link down, the other hub restarting).
func (c *copier) copyStream(ctx context.Context, stream string) {
	wait := 250 * time.Millisecond
	for ctx.Err() == nil {
		n, err := c.copyFrom(ctx, stream)
		if err != nil && ctx.Err() == nil {
			c.b.log.Debug("copy stream", "domain", c.domain, "stream", stream, "err", err)
		}
		if n > 0 {
			wait = 250 * time.Millisecond
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// take reports whether a message with origin o is to be copied here, and
// the origin its copy carries.
func (c *copier) take(o string) (bool, string) {
	fromTeam := c.domain == DomainTeam
	switch {
	case o == "":
		return true, c.domain
	case fromTeam && o != c.b.h.domain:
		return true, o
	}
	return false, ""
}

// copyFrom copies what stream holds past the last position and goes on
// with what comes, until an error. It returns how many messages it read.
func (c *copier) copyFrom(ctx context.Context, stream string) (int, error) {
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rs, err := c.remote.Stream(ictx, stream)
	if err != nil {
		return 0, err
	}
	info := rs.CachedInfo()
	if _, err := c.local.Stream(ictx, stream); errors.Is(err, jetstream.ErrStreamNotFound) {
		cfg := info.Config
		cfg.Sources, cfg.Mirror, cfg.Placement, cfg.Replicas = nil, nil, nil, 1
		if _, err := c.local.CreateStream(ictx, cfg); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return 0, fmt.Errorf("create %s: %w", stream, err)
		}
	} else if err != nil {
		return 0, err
	}
	last := c.getPos(stream)
	if last > info.State.LastSeq {
		last = 0 // the other side's store was made anew
	}
	// An ephemeral consumer without acknowledgements (no ack subject
	// crosses the link); one that lost a message (consumer sequence not
	// the next) is made anew from the last one copied.
	ccfg := jetstream.ConsumerConfig{AckPolicy: jetstream.AckNonePolicy, InactiveThreshold: time.Minute,
		MemoryStorage: true}
	if last > 0 {
		ccfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		ccfg.OptStartSeq = last + 1
	}
	cons, err := rs.CreateConsumer(ictx, ccfg)
	if err != nil {
		return 0, err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = rs.DeleteConsumer(dctx, cons.CachedInfo().Name)
		cancel()
	}()
	var cseq uint64
	read := 0
	for ctx.Err() == nil {
		batch, err := cons.Fetch(256, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return read, err
		}
		n := 0
		for m := range batch.Messages() {
			meta, err := m.Metadata()
			if err != nil {
				return read, err
			}
			if meta.Sequence.Consumer != cseq+1 {
				return read, fmt.Errorf("%s: consumer sequence %d after %d: a message was lost on the way", stream, meta.Sequence.Consumer, cseq)
			}
			cseq = meta.Sequence.Consumer
			if ok, origin := c.take(m.Headers().Get(OriginHeader)); ok {
				if err := c.publish(ctx, m, origin); err != nil {
					return read, err
				}
			}
			last = meta.Sequence.Stream
			n++
		}
		if n > 0 {
			read += n
			if err := c.setPos(stream, last); err != nil {
				return read, fmt.Errorf("keep the bridge's position: %w", err)
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return read, err
		}
	}
	return read, ctx.Err()
}

// publish stores a copy of m in the local stream, with origin.
func (c *copier) publish(ctx context.Context, m jetstream.Msg, origin string) error {
	out := &nats.Msg{Subject: m.Subject(), Data: m.Data(), Header: nats.Header{}}
	for k, v := range m.Headers() {
		// The checks were the sender's, on its side; a rollup is refused
		// by the presence bucket (and the KV-Operation header tells).
		if strings.HasPrefix(k, "Nats-Expected-") || k == jetstream.MsgRollup {
			continue
		}
		out.Header[k] = v
	}
	out.Header.Set(OriginHeader, origin)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := c.local.PublishMsg(pctx, out); err != nil {
		return fmt.Errorf("copy %s: %w", m.Subject(), err)
	}
	return nil
}
