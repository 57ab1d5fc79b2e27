package bus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Options configure Connect. Only URL is required; the zero value of every
// other field means its default, filled in by fill.
type Options struct {
	// URL of the NATS server or cluster (nats://, tls://, several separated
	// by commas). A token may be in the URL (nats://TOKEN@host:port).
	URL string
	// Token authenticates to a token-protected server (the embedded hub).
	Token string
	// Creds is a NATS credentials file (JWT and nkey) for an external server.
	Creds string
	// TLSCA, TLSCert and TLSKey are PEM files for TLS to an external server:
	// the CA that signed its certificate (when the system's do not), and
	// this client's own certificate and key (when it asks for one).
	TLSCA, TLSCert, TLSKey string
	// TLSPin, when set, trusts only the server certificate with this
	// SHA-256 (hex, see CertPin) and skips the CA and host name checks: a
	// local hub found through RELAY_HOME (hub.Endpoint.TLSPin).
	TLSPin string
	// InboxPrefix is the prefix of this connection's reply subjects; empty
	// means nats.go's (_INBOX). An agent's own credential may read only the
	// replies under the prefix the hub issued it with.
	InboxPrefix string
	// Workspace is joined; empty means DefaultWorkspace.
	Workspace string
	// Name is this client's agent name: the sender of what it sends and the
	// owner of its inbox and presence. Required for Send, Register and Inbox.
	Name string
	// Human marks this client as a human or a script (relay send): what it
	// sends is marked human, with Name as the user name, and goes to the
	// subject without a sender, which needs the administrator's token.
	Human bool
	// Replicas of the workspace's stream and bucket when this client creates
	// them; zero means 1 (use 3 on a three-node cluster).
	Replicas int
	// Retention is how long messages and receipts are kept; zero means 30
	// days. MaxMessages bounds the stream (oldest dropped); zero means 1e6.
	Retention   time.Duration
	MaxMessages int64
	// Heartbeat is how often a registered agent refreshes its presence;
	// zero means 2 s. A claim whose heartbeats stopped for three periods is
	// taken to be a crashed agent's and may be claimed again.
	Heartbeat time.Duration
	// AckWait is how long an unacknowledged delivery waits before it is
	// delivered again; zero means DefaultAckWait. Delivery.InProgress
	// extends it.
	AckWait time.Duration
	// ReconnectBuffer bounds what is buffered while the connection is down;
	// zero means 8 MiB. Beyond it Send fails with nats.ErrReconnectBufExceeded.
	ReconnectBuffer int
	// Discover, when set, is asked for the hub's current URL before every
	// reconnection, and its host:port is dialled instead of URL's: a local
	// hub that came back on another port is found again. An error falls
	// back to URL. The first connection dials URL: the caller has just
	// found the hub there. (hub.Find fits, for RELAY_HOME.)
	Discover func() (url string, err error)
	// Logger receives connection events and rejected envelopes; nil
	// discards them.
	Logger *slog.Logger
	// OnRefused, when set, is called once if the hub closes the connection
	// because it refused this client's credentials (revoked while connected,
	// or refused at a reconnection): the client does not reconnect after
	// that. err wraps ErrRevoked or ErrUnauthorized and the server's reason.
	// It runs on nats.go's callback goroutine; it must not block. Close does
	// not call it.
	OnRefused func(err error)
}

// DefaultAckWait is how long the hub waits for an agent's inbox to settle
// a delivery (acknowledge, reject or report it in progress) before it
// delivers the message again: 10 s, what relay wrap uses. A wrapper reports
// a message still waiting to be typed as in progress every 3 s; one that
// cannot (stopped, suspended, cut off) gets it again, and its delivery
// queue drops the copy by id.
const DefaultAckWait = 10 * time.Second

func (o *Options) fill() error {
	if o.URL == "" {
		return errors.New("connect to hub: no URL")
	}
	if o.Workspace == "" {
		o.Workspace = DefaultWorkspace
	}
	if err := ValidName("workspace", o.Workspace); err != nil {
		return err
	}
	if o.Name != "" {
		if err := ValidName("agent", o.Name); err != nil {
			return err
		}
	}
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.Retention == 0 {
		o.Retention = 30 * 24 * time.Hour
	}
	if o.MaxMessages == 0 {
		o.MaxMessages = 1_000_000
	}
	if o.Heartbeat == 0 {
		o.Heartbeat = 2 * time.Second
	}
	if o.AckWait == 0 {
		o.AckWait = DefaultAckWait
	}
	if o.ReconnectBuffer == 0 {
		o.ReconnectBuffer = 8 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return nil
}

// Client is one connection to the hub, for one agent (or a human, a
// script) in one workspace. It is safe for concurrent use. Close it.
type Client struct {
	opts Options
	log  *slog.Logger
	nc   *nats.Conn
	js   jetstream.JetStream
	kv   *presenceKV

	streamMu sync.Mutex
	stream   jetstream.Stream // nil until first needed (workspaceStream)

	dedupKey []byte        // keys dedupID: the Nats-Msg-Ids only this client can make
	names    names         // the agent names seen registered
	closed   chan struct{} // closed when the connection is
	receipts *receipter    // PostReceipt's background publisher

	mu    sync.Mutex
	claim *claim // non-nil once registered

	denied deniedWatches // publishes watched for a refusal (denied.go)

	revoked atomic.Bool // the server said the credentials were revoked (refused.go)
	closing atomic.Bool // Close was called: a closed connection is not a refusal

	// cli and skipped go into the presence record (SetCLI, SetSkipped).
	cli     atomic.Value // string
	skipped atomic.Int64
	stuck   atomic.Pointer[stuck] // SetStuck
	ask     atomic.Pointer[Ask]   // SetAsk

	// enc is the presence record last encoded (presence.go): a heartbeat
	// that changes nothing sends the same bytes without encoding them.
	enc   encodedRecord
	ident identity

	// batchWait is the batcher's fallback wait (batchWait; tests that
	// check how a burst is cut set it long, so that only the hub's
	// pending counts decide).
	batchWait time.Duration
}

// Connect connects to the hub and makes sure the workspace's stream and
// presence bucket exist. It reconnects by itself forever after a first
// success; the first connection must succeed.
func Connect(ctx context.Context, o Options) (*Client, error) {
	if err := o.fill(); err != nil {
		return nil, err
	}
	c := &Client{opts: o, log: o.Logger.With("workspace", o.Workspace, "agent", o.Name), closed: make(chan struct{}), dedupKey: newDedupKey(o), ident: readIdentity(), batchWait: batchWait}
	c.receipts = newReceipter(c)
	c.cli.Store("")
	name := "relay"
	if o.Name != "" {
		name += ":" + o.Workspace + ":" + o.Name
	}
	nopts := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectJitter(100*time.Millisecond, time.Second),
		nats.ReconnectBufSize(o.ReconnectBuffer),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if c.closing.Load() {
				return // Close ends the connection: no reconnecting
			}
			c.log.Warn("disconnected from hub; reconnecting", "err", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			c.log.Info("reconnected to hub", "url", nc.ConnectedUrlRedacted())
		}),
		nats.ClosedHandler(c.onClosed),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			c.noteRevoked(err)
			c.publishDenied(err)
			c.log.Error("hub connection error", "err", err)
		}),
	}
	nopts = append(nopts, AuthOptions(o)...)
	timeout := nats.DefaultTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
		nopts = append(nopts, nats.Timeout(timeout))
	}
	nopts = append(nopts, nats.SetCustomDialer(newHubDialer(o.Discover, timeout)))
	nc, err := nats.Connect(o.URL, nopts...)
	if err != nil {
		return nil, fmt.Errorf("connect to hub %s: %w", redact(o.URL), explain(err))
	}
	c.nc = nc
	if err := c.setup(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

// setup finds or creates the workspace's stream and presence bucket and
// guards the bucket. The two look-ups are asked together, one round trip
// instead of two (issue 34: a wrapper's start waits for them).
func (c *Client) setup(ctx context.Context) error {
	js, err := jetstream.New(c.nc)
	if err != nil {
		return fmt.Errorf("connect to hub: %w", err)
	}
	c.js = js
	var serr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		serr = c.openStream(ctx)
	}()
	kerr := c.openPresence(ctx)
	<-done
	if serr != nil {
		return serr
	}
	return kerr
}

// streamConfig is the workspace stream's configuration, for a client
// that makes it.
func (c *Client) streamConfig() jetstream.StreamConfig {
	ws := c.opts.Workspace
	return jetstream.StreamConfig{
		Name:        StreamName(ws),
		Description: "relay messages and receipts of workspace " + ws,
		Subjects:    streamSubjects(ws),
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      c.opts.Retention,
		MaxMsgs:     c.opts.MaxMessages,
		MaxMsgSize:  8 * MaxBody,
		Discard:     jetstream.DiscardOld,
		Storage:     jetstream.FileStorage,
		Replicas:    c.opts.Replicas,
		Duplicates:  2 * time.Minute,
	}
}

// openStream finds or creates the workspace's stream. What it finds is
// read as a streamBrief: the stream's handle, and its whole info, are
// fetched when first needed (workspaceStream).
func (c *Client) openStream(ctx context.Context) error {
	name := StreamName(c.opts.Workspace)
	b, err := c.streamBrief(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		var st jetstream.Stream
		st, err = c.js.CreateStream(ctx, c.streamConfig())
		if err == nil {
			c.streamMu.Lock()
			c.stream = st
			c.streamMu.Unlock()
			return nil
		}
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			b, err = c.streamBrief(ctx, name) // made meanwhile
		}
	}
	if err == nil && lacks(b.Config.Subjects, streamSubjects(c.opts.Workspace)) {
		c.addSubjects(ctx)
	}
	if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) ||
		errors.Is(err, nats.ErrNoResponders) {
		return fmt.Errorf("open stream %s: %w: relay needs JetStream on the NATS server (nats-server -js)", name, err)
	}
	if err != nil {
		return fmt.Errorf("open stream %s: %w", name, hubFull(err))
	}
	return nil
}

// workspaceStream returns the handle of the workspace's stream, looked up
// at its first use: a wrapper's start needs none (its inbox asks for its
// consumer by the stream's name).
func (c *Client) workspaceStream(ctx context.Context) (jetstream.Stream, error) {
	c.streamMu.Lock()
	defer c.streamMu.Unlock()
	if c.stream != nil {
		return c.stream, nil
	}
	st, err := c.js.Stream(ctx, StreamName(c.opts.Workspace))
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", StreamName(c.opts.Workspace), err)
	}
	c.stream = st
	return st, nil
}

// openPresence finds or creates the workspace's presence bucket, and
// guards it (guardPresence).
func (c *Client) openPresence(ctx context.Context) error {
	ws := c.opts.Workspace
	bucket := PresenceBucket(ws)
	b, err := c.streamBrief(ctx, "KV_"+bucket)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		var h jetstream.KeyValue
		h, err = c.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:      bucket,
			Description: "relay agents of workspace " + ws,
			History:     1,
			Storage:     jetstream.FileStorage,
			Replicas:    c.opts.Replicas,
		})
		if err == nil {
			c.kv = newPresenceKV(c.nc, c.js, bucket, streamBrief{}) // asks through h
			c.kv.setHandle(h)
			c.guardPresence(ctx, streamBrief{})
			return nil
		}
		if errors.Is(err, jetstream.ErrBucketExists) || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			b, err = c.streamBrief(ctx, "KV_"+bucket) // made meanwhile
		}
	}
	if err == nil && b.Config.MaxMsgsPerSubject < 1 {
		err = jetstream.ErrBadBucket // as jetstream's KeyValue
	}
	if err != nil {
		return fmt.Errorf("open presence bucket %s: %w", bucket, hubFull(err))
	}
	c.kv = newPresenceKV(c.nc, c.js, bucket, b)
	c.guardPresence(ctx, b)
	return nil
}

// Name is this client's agent name.
func (c *Client) Name() string { return c.opts.Name }

// Workspace is the workspace this client joined.
func (c *Client) Workspace() string { return c.opts.Workspace }

// Conn is the underlying NATS connection, for callers that add their own
// subjects (the memory service, user handlers). Do not close it.
func (c *Client) Conn() *nats.Conn { return c.nc }

// closeFlushWait bounds Close's one round trip to the hub.
const closeFlushWait = time.Second

// Close marks a registered agent offline, stops its heartbeat and closes the
// connection once the hub has read what was written on it.
//
// It waits for one round trip, not one per write (issue 34: a wrapper's exit
// was a third of `relay wrap -- true`): the offline record is published
// without waiting for its answer (a compare-and-set on the claim's revision,
// so it never overwrites another agent's claim), and a PING's PONG then says
// that the hub read it and everything published before it (a credential's
// revocation, the last receipts); the hub stores it after the connection is
// gone. A drain is not used: it polls its subscriptions every 10 ms, twice,
// and what a closing client's subscriptions would still receive is
// delivered again by the hub anyway.
func (c *Client) Close() error {
	c.closing.Store(true)
	c.mu.Lock()
	cl := c.claim
	c.claim = nil
	c.mu.Unlock()
	connected := c.nc.IsConnected()
	if connected {
		c.receipts.flush(receiptFlushWait)
	} else {
		c.receipts.stop()
	}
	if cl != nil {
		cl.stop()
		if connected { // else the claim ages out by itself
			if err := c.publishOffline(cl); err != nil {
				c.log.Warn("mark offline", "err", err)
			}
		}
	}
	if connected {
		if err := c.nc.FlushTimeout(closeFlushWait); err != nil {
			c.log.Warn("close: the hub did not answer", "err", err)
		}
	}
	c.nc.Close()
	<-c.closed
	return nil
}

// redact drops a token or password from a URL for messages.
func redact(u string) string {
	for i := 0; i+3 <= len(u); i++ {
		if u[i:i+3] == "://" {
			rest := u[i+3:]
			for j := 0; j < len(rest) && rest[j] != '/'; j++ {
				if rest[j] == '@' {
					return u[:i+3] + "***" + rest[j:]
				}
			}
			break
		}
	}
	return u
}

// streamSubjects are the subjects of a workspace's stream: inboxes without
// and with a sender token, and receipts.
func streamSubjects(ws string) []string {
	return []string{InboxSubject(ws, "*"), SenderInboxSubject(ws, "*", "*"), ReceiptSubject(ws, "*")}
}

// lacks reports whether have lacks any of want.
func lacks(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return true
		}
	}
	return false
}

// addSubjects adds to a stream made by an older relay the subjects it
// lacks (the inboxes with a sender). An agent's own credential may not
// update streams: its wrapper, with the administrator's token, does.
func (c *Client) addSubjects(ctx context.Context) {
	st, err := c.workspaceStream(ctx)
	if err != nil {
		c.log.Warn("add subjects to the workspace stream", "err", err)
		return
	}
	cfg := st.CachedInfo().Config
	changed := false
	for _, s := range streamSubjects(c.opts.Workspace) {
		if !slices.Contains(cfg.Subjects, s) {
			cfg.Subjects = append(cfg.Subjects, s)
			changed = true
		}
	}
	if !changed {
		return
	}
	st, err = c.js.UpdateStream(ctx, cfg)
	if err != nil {
		c.log.Warn("add subjects to the workspace stream", "stream", cfg.Name, "err", err)
		return
	}
	c.streamMu.Lock()
	c.stream = st
	c.streamMu.Unlock()
}
