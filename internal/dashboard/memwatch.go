package dashboard

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/relayhq/relay/internal/memory"
)

// memWatch sees the memory service's save and forget requests (a plain
// subscription beside the service's queue group) and their replies (a
// subscription to each request's reply subject), and reports each change
// that succeeded. A reply it missed (it often comes before the subscription
// reaches the server) is made up after replyWait: a save is looked up among
// its author's newest memories, a forget reports the id.
type memWatch struct {
	nc     *nats.Conn
	api    *memory.Client
	prefix string
	emit   func(op string, m memory.Memory, created bool)
	subs   []*nats.Subscription

	mu      sync.Mutex
	pending map[string]*pendingReq
}

const replyWait = 500 * time.Millisecond

type pendingReq struct {
	op    string
	req   memRequest
	sub   *nats.Subscription
	timer *time.Timer
}

// memRequest and memReply are the parts of the service's wire format
// (internal/memory/service.go, docs/memory.md) the dashboard reads.
type memRequest struct {
	Memory *memory.Memory `json:"memory,omitempty"`
	ID     string         `json:"id,omitempty"`
}

type memReply struct {
	Memory  *memory.Memory  `json:"memory,omitempty"`
	Created bool            `json:"created,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

func watchMemory(nc *nats.Conn, prefix string, emit func(op string, m memory.Memory, created bool)) (*memWatch, error) {
	w := &memWatch{nc: nc, api: memory.NewClient(nc, prefix), prefix: prefix, emit: emit, pending: map[string]*pendingReq{}}
	for _, verb := range []string{"save", "forget"} {
		sub, err := nc.Subscribe(prefix+"."+verb, w.onRequest)
		if err != nil {
			w.stop()
			return nil, err
		}
		w.subs = append(w.subs, sub)
	}
	return w, nc.Flush()
}

func (w *memWatch) onRequest(m *nats.Msg) {
	if m.Reply == "" {
		return
	}
	var req memRequest
	if json.Unmarshal(m.Data, &req) != nil {
		return
	}
	p := &pendingReq{op: strings.TrimPrefix(m.Subject, w.prefix+"."), req: req}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, dup := w.pending[m.Reply]; dup {
		return
	}
	sub, err := w.nc.Subscribe(m.Reply, func(r *nats.Msg) { w.onReply(r.Subject, r.Data) })
	if err == nil {
		_ = sub.AutoUnsubscribe(1)
	}
	p.sub = sub
	p.timer = time.AfterFunc(replyWait, func() { w.onReply(m.Reply, nil) })
	w.pending[m.Reply] = p
}

// onReply reports the change of the request answered on subject; data nil
// means no reply was seen in time.
func (w *memWatch) onReply(subject string, data []byte) {
	w.mu.Lock()
	p, ok := w.pending[subject]
	delete(w.pending, subject)
	w.mu.Unlock()
	if !ok {
		return
	}
	p.timer.Stop()
	if p.sub != nil {
		_ = p.sub.Unsubscribe()
	}
	if data == nil { // missed the reply: tell what was asked
		switch {
		case p.op == "save" && p.req.Memory != nil:
			m := w.lookup(*p.req.Memory)
			w.emit(p.op, m, m.ID != "" && m.Created.Equal(m.Updated))
		case p.op == "forget" && p.req.ID != "":
			w.emit(p.op, memory.Memory{ID: p.req.ID}, false)
		}
		return
	}
	var rep memReply
	if json.Unmarshal(data, &rep) != nil || len(rep.Error) > 0 || rep.Memory == nil {
		return // failed: nothing changed
	}
	w.emit(p.op, *rep.Memory, rep.Created)
}

// lookup finds the memory a save request stored: the newest of its author
// in its workspace with its text; else the request's memory (without id).
func (w *memWatch) lookup(m memory.Memory) memory.Memory {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ms, err := w.api.List(ctx, memory.Filter{Workspace: m.Workspace, Author: m.Author, Limit: 20})
	if err != nil {
		return m
	}
	for _, x := range ms {
		if strings.TrimSpace(x.Text) == strings.TrimSpace(m.Text) {
			return x
		}
	}
	return m
}

func (w *memWatch) stop() {
	for _, s := range w.subs {
		_ = s.Unsubscribe()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, p := range w.pending {
		p.timer.Stop()
		if p.sub != nil {
			_ = p.sub.Unsubscribe()
		}
		delete(w.pending, k)
	}
}
