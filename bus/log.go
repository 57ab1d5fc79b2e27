package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Entry is one message of the log with its latest status at each
// recipient (one recipient for a direct message, several for a broadcast).
type Entry struct {
	Envelope
	// Seq is the stream sequence of the message's first copy.
	Seq uint64 `json:"seq"`
	// Status holds the latest status per recipient; Reasons the reason that
	// came with it, if any.
	Status  map[string]Status `json:"status"`
	Reasons map[string]string `json:"reasons,omitempty"`
	// Stages holds every stage at every recipient with its time, in the
	// order the log stored them.
	Stages []Stage `json:"stages,omitempty"`
	// Invalid says why a stored record is not a valid envelope (it was
	// rejected by its recipient); the Envelope then holds what could be read.
	Invalid string `json:"invalid,omitempty"`
}

// LogOptions select what Log shows. The zero value shows the whole history
// of the workspace and returns.
type LogOptions struct {
	// Follow keeps going after the history, passing each new message and
	// each status change as it happens, until ctx is done.
	Follow bool
	// Agent keeps messages from or to this agent (broadcasts included).
	Agent string
	// ID keeps only the messages with this id (one per sender that used
	// it); From, when set, only those of this sender.
	ID   string
	From string
	// Last keeps only the last Last messages of the history that match (0:
	// all of them). Log then reads only the end of the stream, so that a
	// long history costs no more than the few messages wanted.
	Last int
	// Since keeps messages created at or after Since (zero: all).
	Since time.Time
	// Keep bounds what Follow remembers: the last Keep messages (zero:
	// DefaultLogKeep, and never fewer than Last). A status change of an
	// older message is not reported, so that a dashboard left open for
	// weeks does not grow without end.
	Keep int
}

// DefaultLogKeep is how many messages Log with Follow remembers for their
// status changes when LogOptions.Keep is zero.
const DefaultLogKeep = 10000

// keep is the number of messages Follow remembers.
func (o LogOptions) keep() int {
	k := o.Keep
	if k <= 0 {
		k = DefaultLogKeep
	}
	return max(k, o.Last)
}

func (e *Entry) clone() Entry {
	c := *e
	c.Status = maps.Clone(e.Status)
	c.Reasons = maps.Clone(e.Reasons)
	c.Stages = slices.Clone(e.Stages)
	return c
}

func (o LogOptions) match(e *Entry) bool {
	if o.ID != "" && e.ID != o.ID {
		return false
	}
	if o.From != "" && e.From != o.From {
		return false
	}
	if !o.Since.IsZero() && e.Created.Before(o.Since) {
		return false
	}
	if o.Agent != "" && e.From != o.Agent && e.To != o.Agent {
		if _, ok := e.Status[o.Agent]; !ok {
			return false
		}
	}
	return true
}

// Log reads the workspace's messages and receipts from the stream (as far
// back as its retention keeps them, or as LogOptions.Last and Since ask)
// and calls fn with each message and its latest statuses, oldest first.
// With Follow it then calls fn again for every new message or status
// change. An error from fn stops Log and is returned.
func (c *Client) Log(ctx context.Context, o LogOptions, fn func(Entry) error) error {
	st, err := c.workspaceStream(ctx)
	if err != nil {
		return fmt.Errorf("read log: %w", err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return fmt.Errorf("read log: %w", err)
	}
	first, last := info.State.FirstSeq, info.State.LastSeq
	if last == 0 && !o.Follow {
		return nil
	}
	// For the last few messages, or those since a time, read a window at
	// the end of the stream and widen it until it holds more of them than
	// wanted (the oldest may miss copies from before the window), reaches
	// back before Since, or reaches the start. (A consumer started by time
	// would wait forever when Since is after the last record.)
	window := uint64(max(8*o.Last, 256))
	windowed := o.Last > 0 || !o.Since.IsZero()
	for {
		var start uint64 // 0: from the start
		if windowed && last >= window && last-window+1 > first {
			start = last - window + 1
		}
		r, err := c.openLog(ctx, start)
		if err != nil {
			return err
		}
		done, err := r.history(last)
		if err == nil && !done && start != 0 && !r.enough(o) {
			r.stop()
			window *= 4
			continue
		}
		defer r.stop()
		if err != nil || done {
			return err
		}
		return r.run(o, fn)
	}
}

// logReader folds a stream consumer's records into log entries.
type logReader struct {
	c       *Client
	ctx     context.Context
	it      jetstream.MessagesContext
	stop    func()
	entries map[string]*Entry
	order   []string // entry keys, oldest first
	oldest  time.Time
}

// openLog starts an ordered consumer at sequence start (0: the stream's
// start).
func (c *Client) openLog(ctx context.Context, start uint64) (*logReader, error) {
	var cfg jetstream.OrderedConsumerConfig
	if start > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, start
	}
	cons, err := c.js.OrderedConsumer(ctx, StreamName(c.opts.Workspace), cfg)
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	it, err := cons.Messages()
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	after := context.AfterFunc(ctx, it.Stop)
	return &logReader{c: c, ctx: ctx, it: it, entries: map[string]*Entry{},
		stop: func() { after(); it.Stop() }}, nil
}

// next folds the next record in and returns its sequence and the entry it
// changed. ok is false when ctx ended or the consumer was stopped.
func (r *logReader) next() (seq uint64, changed *Entry, ok bool, err error) {
	for {
		m, err := r.it.Next()
		if err != nil {
			if r.ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return 0, nil, false, nil
			}
			return 0, nil, false, fmt.Errorf("read log: %w", err)
		}
		md, err := m.Metadata()
		if err != nil {
			continue
		}
		if r.oldest.IsZero() {
			r.oldest = md.Timestamp
		}
		seq = md.Sequence.Stream
		return seq, r.c.apply(r.entries, &r.order, m.Subject(), m.Data(), seq, md.Timestamp), true, nil
	}
}

// history reads up to sequence last. done says that Log is over (ctx ended).
func (r *logReader) history(last uint64) (done bool, err error) {
	for last > 0 {
		seq, _, ok, err := r.next()
		if err != nil || !ok {
			return true, err
		}
		if seq >= last {
			return false, nil
		}
	}
	return false, nil
}

// enough reports whether the history read holds what o asks for: more
// than o.Last matching messages, or records from before o.Since.
func (r *logReader) enough(o LogOptions) bool {
	if !o.Since.IsZero() && !r.oldest.IsZero() && r.oldest.Before(o.Since) {
		return true
	}
	if o.Last == 0 {
		return false
	}
	n := 0
	for _, key := range r.order {
		if o.match(r.entries[key]) {
			if n++; n > o.Last {
				return true
			}
		}
	}
	return false
}

// run hands over the history (its last o.Last matches, when set) and, with
// o.Follow, every change after it.
func (r *logReader) run(o LogOptions, fn func(Entry) error) error {
	var matched []*Entry
	for _, key := range r.order {
		if e := r.entries[key]; o.match(e) {
			matched = append(matched, e)
		}
	}
	if o.Last > 0 && len(matched) > o.Last {
		matched = matched[len(matched)-o.Last:]
	}
	for _, e := range matched {
		if err := fn(e.clone()); err != nil {
			return err
		}
	}
	for o.Follow {
		r.forget(o.keep())
		_, changed, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		if changed != nil && o.match(changed) {
			if err := fn(changed.clone()); err != nil {
				return err
			}
		}
	}
	return nil
}

// forget drops all but the last keep messages. The order slice is copied
// when it has shrunk to half its array, so that the array is freed too.
func (r *logReader) forget(keep int) {
	n := len(r.order) - keep
	if n <= 0 {
		return
	}
	for _, key := range r.order[:n] {
		delete(r.entries, key)
	}
	r.order = r.order[n:]
	if len(r.order) < cap(r.order)/2 {
		r.order = append([]string(nil), r.order...)
	}
}

// apply folds one stored record into entries and returns the entry it
// changed, if any.
func (c *Client) apply(entries map[string]*Entry, order *[]string, subject string, data []byte, seq uint64, stored time.Time) *Entry {
	parts := strings.Split(subject, ".")
	if len(parts) != 4 && (len(parts) != 5 || parts[2] != "inbox") {
		return nil
	}
	switch parts[2] {
	case "inbox":
		recipient := parts[3]
		env, err := ParseEnvelope(data)
		if err == nil {
			err = checkSender(subject, env)
		}
		// A message is its sender's id: another sender's envelope with
		// the same id is another message.
		from := env.From
		if len(parts) == 5 { // the sender the server vouches for
			from = parts[4]
		}
		key := logKey(from, env.ID)
		if ValidName("message id", env.ID) != nil {
			key = fmt.Sprintf("#%d", seq)
		}
		e, ok := entries[key]
		if !ok {
			e = &Entry{Envelope: env, Seq: seq, Status: map[string]Status{}}
			if e.Created.IsZero() { // optional for foreign senders: when the hub stored it
				e.Created = stored.UTC()
			}
			if err != nil {
				if ValidName("message id", e.ID) != nil {
					e.ID = key
				}
				e.Invalid = err.Error()
				e.Status[recipient] = StatusFailed
				e.Stages = append(e.Stages, Stage{Agent: recipient, Stage: StatusFailed, At: stored.UTC(), Reason: e.Invalid})
				if e.To == "" {
					e.To = recipient
				}
			}
			entries[key] = e
			*order = append(*order, key)
		}
		if _, seen := e.Status[recipient]; !seen {
			e.Status[recipient] = StatusQueued
			e.Stages = append(e.Stages, Stage{Agent: recipient, Stage: StatusQueued, At: stored.UTC()})
		}
		return e
	case "receipt":
		var r Receipt
		if json.Unmarshal(data, &r) != nil {
			return nil
		}
		key := logKey(r.From, parts[3])
		e, ok := entries[key]
		if !ok && r.Message != nil && r.Message.ID == parts[3] && r.Message.From == r.From {
			// A held message: no inbox has it, its receipt carries it.
			e = &Entry{Envelope: *r.Message, Seq: seq, Status: map[string]Status{}}
			entries[key] = e
			*order = append(*order, key)
			ok = true
		}
		if !ok {
			return nil
		}
		st := Stage{Agent: r.Agent, Stage: r.Status, At: r.Time.UTC(), Reason: r.Reason}
		if st.At.IsZero() {
			st.At = stored.UTC()
		}
		if r.Answer != nil {
			st.Answer, st.AnswerID = r.Answer.Body, r.Answer.ID
		}
		e.addStage(st)
		return e
	}
	return nil
}

// logKey is what the log knows a message by: its sender and its id.
func logKey(from, id string) string { return from + "/" + id }
