package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
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
	// ID keeps only this message.
	ID string
}

func (e *Entry) clone() Entry {
	c := *e
	c.Status = maps.Clone(e.Status)
	c.Reasons = maps.Clone(e.Reasons)
	return c
}

func (o LogOptions) match(e *Entry) bool {
	if o.ID != "" && e.ID != o.ID {
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
// back as its retention keeps them) and calls fn with each message and its
// latest statuses, oldest first. With Follow it then calls fn again for
// every new message or status change. An error from fn stops Log and is
// returned.
func (c *Client) Log(ctx context.Context, o LogOptions, fn func(Entry) error) error {
	info, err := c.stream.Info(ctx)
	if err != nil {
		return fmt.Errorf("read log: %w", err)
	}
	last := info.State.LastSeq
	if last == 0 && !o.Follow {
		return nil
	}
	cons, err := c.js.OrderedConsumer(ctx, StreamName(c.opts.Workspace), jetstream.OrderedConsumerConfig{})
	if err != nil {
		return fmt.Errorf("read log: %w", err)
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("read log: %w", err)
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	defer it.Stop()

	entries := map[string]*Entry{}
	var order []string
	replayed := last == 0
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return nil
			}
			return fmt.Errorf("read log: %w", err)
		}
		md, err := m.Metadata()
		if err != nil {
			continue
		}
		seq := md.Sequence.Stream
		changed := c.apply(entries, &order, m.Subject(), m.Data(), seq, md.Timestamp)
		if !replayed {
			if seq < last {
				continue
			}
			replayed = true
			for _, id := range order {
				if e := entries[id]; o.match(e) {
					if err := fn(e.clone()); err != nil {
						return err
					}
				}
			}
			if !o.Follow {
				return nil
			}
			continue
		}
		if changed != nil && o.match(changed) {
			if err := fn(changed.clone()); err != nil {
				return err
			}
		}
	}
}

// apply folds one stored record into entries and returns the entry it
// changed, if any.
func (c *Client) apply(entries map[string]*Entry, order *[]string, subject string, data []byte, seq uint64, stored time.Time) *Entry {
	parts := strings.Split(subject, ".")
	if len(parts) != 4 {
		return nil
	}
	switch parts[2] {
	case "inbox":
		recipient := parts[3]
		env, err := ParseEnvelope(data)
		key := env.ID
		if ValidName("message id", key) != nil {
			key = fmt.Sprintf("#%d", seq)
		}
		e, ok := entries[key]
		if !ok {
			e = &Entry{Envelope: env, Seq: seq, Status: map[string]Status{}}
			if e.Created.IsZero() { // optional for foreign senders: when the hub stored it
				e.Created = stored.UTC()
			}
			if err != nil {
				e.ID = key
				e.Invalid = err.Error()
				e.Status[recipient] = StatusFailed
				if e.To == "" {
					e.To = recipient
				}
			}
			entries[key] = e
			*order = append(*order, key)
		}
		if _, seen := e.Status[recipient]; !seen {
			e.Status[recipient] = StatusQueued
		}
		return e
	case "receipt":
		var r Receipt
		if json.Unmarshal(data, &r) != nil {
			return nil
		}
		e, ok := entries[parts[3]]
		if !ok && r.Message != nil && r.Message.ID == parts[3] {
			// A held message: no inbox has it, its receipt carries it.
			e = &Entry{Envelope: *r.Message, Seq: seq, Status: map[string]Status{}}
			entries[parts[3]] = e
			*order = append(*order, parts[3])
			ok = true
		}
		if !ok {
			return nil
		}
		e.Status[r.Agent] = r.Status
		if r.Reason != "" {
			if e.Reasons == nil {
				e.Reasons = map[string]string{}
			}
			e.Reasons[r.Agent] = r.Reason
		} else {
			delete(e.Reasons, r.Agent)
		}
		return e
	}
	return nil
}
