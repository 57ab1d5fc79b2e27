package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// presenceKV is the workspace's presence bucket. A name's claim and its
// heartbeats read and write one key (Get, Create, Update): those are asked
// of the hub here with the bucket's own subjects, as jetstream's KeyValue
// asks them, so that a client's start looks the bucket up with a
// streamBrief. jetstream's KeyValue needs the stream's whole info first,
// and decoding it built encoding/json's decoders for a few dozen types in
// every new process: the largest part of a wrapper's hub link in
// `relay wrap -- true` (issue 34). jetstream's handle is looked up at the
// first use of anything else (ListKeys, Put), or for every call when the
// bucket is not one these requests fit (no direct gets, a mirror).
type presenceKV struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	bucket string
	stream string // KV_<bucket>
	pre    string // $KV.<bucket>.: a key's subject is pre + key
	plain  bool   // the bucket serves direct gets and is no mirror

	mu   sync.Mutex
	full jetstream.KeyValue // jetstream's handle, once looked up
}

// newPresenceKV returns the bucket whose stream b describes.
func newPresenceKV(nc *nats.Conn, js jetstream.JetStream, bucket string, b streamBrief) *presenceKV {
	return &presenceKV{nc: nc, js: js, bucket: bucket, stream: "KV_" + bucket, pre: "$KV." + bucket + ".",
		plain: b.Config.AllowDirect && b.Config.Mirror == nil}
}

// handle returns jetstream's KeyValue of the bucket, looked up at its first
// use.
func (kv *presenceKV) handle(ctx context.Context) (jetstream.KeyValue, error) {
	kv.mu.Lock()
	defer kv.mu.Unlock()
	if kv.full != nil {
		return kv.full, nil
	}
	h, err := kv.js.KeyValue(ctx, kv.bucket)
	if err != nil {
		return nil, err
	}
	kv.full = h
	return h, nil
}

// setHandle records jetstream's handle of a bucket this client made.
func (kv *presenceKV) setHandle(h jetstream.KeyValue) {
	kv.mu.Lock()
	kv.full = h
	kv.mu.Unlock()
}

// Get returns key's latest entry; jetstream.ErrKeyNotFound when it has
// none or was deleted, as jetstream's Get.
func (kv *presenceKV) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	if !kv.plain {
		h, err := kv.handle(ctx)
		if err != nil {
			return nil, err
		}
		return h.Get(ctx, key)
	}
	e, err := kv.last(ctx, key)
	if errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, jetstream.ErrKeyNotFound
	}
	return e, err
}

// last returns key's latest entry, with jetstream.ErrKeyDeleted (and the
// entry) when it is a delete or purge marker.
func (kv *presenceKV) last(ctx context.Context, key string) (*kvEntry, error) {
	ctx, cancel := withJSDeadline(ctx)
	defer cancel()
	r, err := kv.nc.RequestWithContext(ctx, "$JS.API.DIRECT.GET."+kv.stream+"."+kv.pre+key, nil)
	if err != nil {
		return nil, err
	}
	if len(r.Data) == 0 {
		switch r.Header.Get("Status") {
		case "404":
			return nil, jetstream.ErrKeyNotFound
		case "":
		default:
			return nil, fmt.Errorf("get %s of %s: %s %s", key, kv.bucket, r.Header.Get("Status"), r.Header.Get("Description"))
		}
	}
	seq, err := strconv.ParseUint(r.Header.Get(jetstream.SequenceHeader), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("get %s of %s: %w: sequence %q", key, kv.bucket, jetstream.ErrInvalidJetStreamResponse, r.Header.Get(jetstream.SequenceHeader))
	}
	tm, err := time.Parse(time.RFC3339Nano, r.Header.Get(jetstream.TimeStampHeaer))
	if err != nil {
		return nil, fmt.Errorf("get %s of %s: %w: %w", key, kv.bucket, jetstream.ErrInvalidJetStreamResponse, err)
	}
	e := &kvEntry{bucket: kv.bucket, key: key, value: r.Data, rev: seq, created: tm, op: jetstream.KeyValuePut}
	switch r.Header.Get("KV-Operation") {
	case "DEL":
		e.op = jetstream.KeyValueDelete
	case "PURGE":
		e.op = jetstream.KeyValuePurge
	case "":
		switch r.Header.Get(jetstream.MarkerReasonHeader) {
		case "MaxAge", "Purge":
			e.op = jetstream.KeyValuePurge
		case "Remove":
			e.op = jetstream.KeyValueDelete
		}
	}
	if e.op != jetstream.KeyValuePut {
		return e, jetstream.ErrKeyDeleted
	}
	return e, nil
}

// Create writes key when it has no value (none, or a delete marker);
// an error matching jetstream.ErrKeyExists when it has one, as jetstream's
// Create.
func (kv *presenceKV) Create(ctx context.Context, key string, val []byte) (uint64, error) {
	if !kv.plain {
		h, err := kv.handle(ctx)
		if err != nil {
			return 0, err
		}
		return h.Create(ctx, key, val)
	}
	rev, err := kv.write(ctx, key, val, 0)
	if err == nil {
		return rev, nil
	}
	if e, gerr := kv.last(ctx, key); errors.Is(gerr, jetstream.ErrKeyDeleted) {
		return kv.write(ctx, key, val, e.rev)
	}
	if wrongLastSeq(err) && !errors.Is(err, jetstream.ErrKeyExists) {
		// A replicated stream's code for it (10164): matched as jetstream
		// matches it.
		return 0, fmt.Errorf("%w: %w", err, jetstream.ErrKeyExists)
	}
	return 0, err
}

// wrongLastSeq reports whether err is JetStream's "wrong last sequence",
// which a replicated stream reports with a code of its own.
func wrongLastSeq(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// Update writes key if its latest revision is rev; an error matching
// jetstream.ErrKeyExists when it is not, as jetstream's Update.
func (kv *presenceKV) Update(ctx context.Context, key string, val []byte, rev uint64) (uint64, error) {
	if !kv.plain {
		h, err := kv.handle(ctx)
		if err != nil {
			return 0, err
		}
		return h.Update(ctx, key, val, rev)
	}
	rev, err := kv.write(ctx, key, val, rev)
	if wrongLastSeq(err) { // as jetstream's Update
		err = fmt.Errorf("%w: %w", err, jetstream.ErrKeyRevisionMismatch)
	}
	return rev, err
}

// Put writes key whatever its value (jetstream's handle).
func (kv *presenceKV) Put(ctx context.Context, key string, val []byte) (uint64, error) {
	h, err := kv.handle(ctx)
	if err != nil {
		return 0, err
	}
	return h.Put(ctx, key, val)
}

// ListKeys lists the bucket's keys (jetstream's handle).
func (kv *presenceKV) ListKeys(ctx context.Context) (jetstream.KeyLister, error) {
	h, err := kv.handle(ctx)
	if err != nil {
		return nil, err
	}
	return h.ListKeys(ctx)
}

// pubAck is the part of JetStream's answer to a publish that write reads.
type pubAck struct {
	Error  *jetstream.APIError `json:"error,omitempty"`
	Stream string              `json:"stream"`
	Seq    uint64              `json:"seq"`
}

// write publishes val to key expecting rev as the key's last revision (0:
// none) and returns the new revision. A publish that no stream answers is
// tried twice more, as jetstream does (a stream's leader changing).
func (kv *presenceKV) write(ctx context.Context, key string, val []byte, rev uint64) (uint64, error) {
	ctx, cancel := withJSDeadline(ctx)
	defer cancel()
	m := nats.NewMsg(kv.pre + key)
	m.Data = val
	m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(rev, 10))
	r, err := kv.nc.RequestMsgWithContext(ctx, m)
	for try := 0; errors.Is(err, nats.ErrNoResponders) && try < jetstream.DefaultPubRetryAttempts; try++ {
		select {
		case <-ctx.Done():
		case <-time.After(jetstream.DefaultPubRetryWait):
		}
		r, err = kv.nc.RequestMsgWithContext(ctx, m)
	}
	if errors.Is(err, nats.ErrNoResponders) {
		return 0, jetstream.ErrNoStreamResponse
	}
	if err != nil {
		return 0, err
	}
	var a pubAck
	if err := json.Unmarshal(r.Data, &a); err != nil {
		return 0, jetstream.ErrInvalidJSAck
	}
	if a.Error != nil {
		return 0, fmt.Errorf("nats: %w", a.Error)
	}
	if a.Stream == "" {
		return 0, jetstream.ErrInvalidJSAck
	}
	return a.Seq, nil
}

// withJSDeadline gives ctx the deadline jetstream's requests get when it
// has none.
func withJSDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, 5*time.Second)
}

// kvEntry is one entry of the bucket, as jetstream's KeyValueEntry.
type kvEntry struct {
	bucket, key string
	value       []byte
	rev         uint64
	created     time.Time
	op          jetstream.KeyValueOp
}

func (e *kvEntry) Bucket() string                  { return e.bucket }
func (e *kvEntry) Key() string                     { return e.key }
func (e *kvEntry) Value() []byte                   { return e.value }
func (e *kvEntry) Revision() uint64                { return e.rev }
func (e *kvEntry) Created() time.Time              { return e.created }
func (e *kvEntry) Delta() uint64                   { return 0 }
func (e *kvEntry) Operation() jetstream.KeyValueOp { return e.op }
