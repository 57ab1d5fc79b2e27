package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// The service speaks JSON over NATS request/reply. A request goes to
// PREFIX.VERB (save, search, list, get, forget, export, import) with a
// request object; the reply is a reply object whose error, when set, says
// what failed. docs/memory.md describes the subjects for other clients.

// QueueGroup is the NATS queue group of the service: with several hubs
// serving one store, each request is answered once.
const QueueGroup = "relay-memory"

// DefaultRequestTimeout bounds a Client call whose context has no deadline.
const DefaultRequestTimeout = 10 * time.Second

// ErrNoService means no memory service answered: no hub runs, or it serves
// another subject prefix.
var ErrNoService = errors.New("no memory service answers")

// exportPage is how many memories one export reply carries, and importBatch
// how many one import request sends; both keep messages well under NATS's
// 1 MB default payload limit (a memory's text is at most 4 KB).
const (
	exportPage  = 100
	importBatch = 100
)

type request struct {
	Memory   *Memory  `json:"memory,omitempty"`   // save
	Query    *Query   `json:"query,omitempty"`    // search
	Filter   *Filter  `json:"filter,omitempty"`   // list
	ID       string   `json:"id,omitempty"`       // get, forget
	After    int64    `json:"after,omitempty"`    // export: the cursor of the previous page
	Memories []Memory `json:"memories,omitempty"` // import
}

type reply struct {
	Memory   *Memory    `json:"memory,omitempty"`
	Created  bool       `json:"created,omitempty"`
	Results  []Result   `json:"results,omitempty"`
	Memories []Memory   `json:"memories,omitempty"`
	Next     int64      `json:"next,omitempty"` // export: the cursor for the next page; 0 at the end
	Added    int        `json:"added,omitempty"`
	Skipped  int        `json:"skipped,omitempty"`
	Error    *wireError `json:"error,omitempty"`
}

// wireError is an error as it travels: code is "not_found", "invalid" or
// "internal".
type wireError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func toWire(err error) *wireError {
	code := "internal"
	switch {
	case errors.Is(err, ErrNotFound):
		code = "not_found"
	case errors.Is(err, ErrInvalid):
		code = "invalid"
	}
	return &wireError{Code: code, Message: err.Error()}
}

// remoteError is an error the service sent back; errors.Is matches the
// sentinel its code stands for.
type remoteError struct{ code, msg string }

func (e *remoteError) Error() string { return e.msg }

func (e *remoteError) Is(target error) bool {
	return (e.code == "not_found" && target == ErrNotFound) || (e.code == "invalid" && target == ErrInvalid)
}

// Serve answers memory requests on subjectPrefix.* from st until ctx is
// cancelled, then stops taking requests, answers those in flight, and
// returns nil. It returns an
// error only when it cannot subscribe. Requests are handled concurrently.
// st is usually a *Store; any API serves (a Qdrant store, a program's
// own), exporting through its Export.
func Serve(ctx context.Context, nc *nats.Conn, subjectPrefix string, st API) error {
	wait, err := Start(ctx, nc, subjectPrefix, st)
	if err != nil {
		return err
	}
	return wait()
}

// Start is Serve in two steps: it returns once the hub has the service's
// subscription, so that a request sent after it returns is answered, and
// wait blocks until ctx is cancelled and the requests in flight are
// answered. A caller that starts the service beside other work (the hub's
// command) uses it to be live before it says it is.
func Start(ctx context.Context, nc *nats.Conn, subjectPrefix string, st API) (wait func() error, err error) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	sub, err := nc.QueueSubscribe(subjectPrefix+".*", QueueGroup, func(msg *nats.Msg) {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			verb := strings.TrimPrefix(msg.Subject, subjectPrefix+".")
			// Not cancelled with ctx: what was received is still answered.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultRequestTimeout)
			defer cancel()
			data, _ := json.Marshal(serveOne(rctx, st, verb, msg.Data))
			if msg.Reply != "" {
				msg.Respond(data)
			}
		}()
	})
	if err != nil {
		return nil, fmt.Errorf("serve memory on %s.*: %w", subjectPrefix, err)
	}
	if err := nc.Flush(); err != nil {
		sub.Unsubscribe()
		return nil, fmt.Errorf("serve memory on %s.*: %w", subjectPrefix, err)
	}
	return func() error {
		<-ctx.Done()
		sub.Unsubscribe()
		wg.Wait()
		return nil
	}, nil
}

func serveOne(ctx context.Context, st API, verb string, data []byte) (rep reply) {
	var req request
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return reply{Error: toWire(fmt.Errorf("%w: bad %s request: %v", ErrInvalid, verb, err))}
	}
	var err error
	need := func(ok bool, what string) bool {
		if !ok {
			err = fmt.Errorf("%w: a %s request needs %s", ErrInvalid, verb, what)
		}
		return ok
	}
	switch verb {
	case "save":
		if need(req.Memory != nil, "a memory") {
			var m Memory
			m, rep.Created, err = st.Save(ctx, *req.Memory)
			rep.Memory = &m
		}
	case "search":
		if need(req.Query != nil, "a query") {
			rep.Results, err = st.Search(ctx, *req.Query)
		}
	case "list":
		if req.Filter == nil {
			req.Filter = &Filter{}
		}
		rep.Memories, err = st.List(ctx, *req.Filter)
	case "get", "forget":
		if need(req.ID != "", "an id") {
			var m Memory
			if verb == "get" {
				m, err = st.Get(ctx, req.ID)
			} else {
				m, err = st.Forget(ctx, req.ID)
			}
			rep.Memory = &m
		}
	case "export":
		rep.Memories, rep.Next, err = exportPageOf(ctx, st, req.After)
	case "import":
		rep.Added, rep.Skipped, err = importInto(ctx, st, req.Memories)
	default:
		err = fmt.Errorf("%w: unknown memory request %q (want save, search, list, get, forget, export or import)", ErrInvalid, verb)
	}
	if err != nil {
		return reply{Error: toWire(err)}
	}
	return rep
}

// Client calls a memory service over NATS. It implements API.
type Client struct {
	nc     *nats.Conn
	prefix string
}

var _ API = (*Client)(nil)

// NewClient returns a Client for the service on subjectPrefix. The
// connection stays the caller's to close.
func NewClient(nc *nats.Conn, subjectPrefix string) *Client {
	return &Client{nc: nc, prefix: subjectPrefix}
}

func (c *Client) call(ctx context.Context, verb string, req request) (reply, error) {
	subject := c.prefix + "." + verb
	data, err := json.Marshal(req)
	if err != nil {
		return reply{}, fmt.Errorf("memory %s: %w", verb, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultRequestTimeout)
		defer cancel()
	}
	msg, err := c.nc.RequestWithContext(ctx, subject, data)
	if errors.Is(err, nats.ErrNoResponders) {
		return reply{}, fmt.Errorf("memory %s on %s: %w", verb, subject, ErrNoService)
	}
	if err != nil {
		return reply{}, fmt.Errorf("memory %s on %s: %w", verb, subject, err)
	}
	var rep reply
	if err := json.Unmarshal(msg.Data, &rep); err != nil {
		return reply{}, fmt.Errorf("memory %s on %s: bad reply: %w", verb, subject, err)
	}
	if rep.Error != nil {
		return reply{}, &remoteError{code: rep.Error.Code, msg: rep.Error.Message}
	}
	return rep, nil
}

func orEmpty(m *Memory) Memory {
	if m == nil {
		return Memory{}
	}
	return *m
}

// Save implements API.
func (c *Client) Save(ctx context.Context, m Memory) (Memory, bool, error) {
	rep, err := c.call(ctx, "save", request{Memory: &m})
	return orEmpty(rep.Memory), rep.Created, err
}

// Search implements API.
func (c *Client) Search(ctx context.Context, q Query) ([]Result, error) {
	rep, err := c.call(ctx, "search", request{Query: &q})
	return rep.Results, err
}

// List implements API.
func (c *Client) List(ctx context.Context, f Filter) ([]Memory, error) {
	rep, err := c.call(ctx, "list", request{Filter: &f})
	return rep.Memories, err
}

// Get implements API.
func (c *Client) Get(ctx context.Context, id string) (Memory, error) {
	rep, err := c.call(ctx, "get", request{ID: id})
	return orEmpty(rep.Memory), err
}

// Forget implements API.
func (c *Client) Forget(ctx context.Context, id string) (Memory, error) {
	rep, err := c.call(ctx, "forget", request{ID: id})
	return orEmpty(rep.Memory), err
}

// Export implements API, a page of memories per request.
func (c *Client) Export(ctx context.Context, w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	var after int64
	for {
		rep, err := c.call(ctx, "export", request{After: after})
		if err != nil {
			return err
		}
		for _, m := range rep.Memories {
			if err := enc.Encode(m); err != nil {
				return fmt.Errorf("export memories: %w", err)
			}
		}
		if rep.Next == 0 {
			return nil
		}
		after = rep.Next
	}
}

// Import implements API. Unlike the Store's, it is all or nothing only per
// batch of importBatch memories; a bad line still stops it before anything
// is sent.
func (c *Client) Import(ctx context.Context, r io.Reader) (added, skipped int, err error) {
	ms, err := ReadJSONLines(r)
	if err != nil {
		return 0, 0, fmt.Errorf("import memories: %w", err)
	}
	for len(ms) > 0 {
		n := min(len(ms), importBatch)
		rep, err := c.call(ctx, "import", request{Memories: ms[:n]})
		if err != nil {
			return added, skipped, err
		}
		added, skipped, ms = added+rep.Added, skipped+rep.Skipped, ms[n:]
	}
	return added, skipped, nil
}

// exportPageOf is one page of an export: by save order from a Store, else
// by position in the API's own export (read again for each page).
func exportPageOf(ctx context.Context, st API, after int64) ([]Memory, int64, error) {
	if s, ok := st.(*Store); ok {
		return s.page(ctx, after, exportPage)
	}
	if s, ok := st.(*QdrantStore); ok {
		return s.local.page(ctx, after, exportPage)
	}
	var buf bytes.Buffer
	if err := st.Export(ctx, &buf); err != nil {
		return nil, 0, err
	}
	ms, err := ReadJSONLines(&buf)
	if err != nil {
		return nil, 0, err
	}
	ms = ms[min(int(after), len(ms)):]
	if len(ms) <= exportPage {
		return ms, 0, nil
	}
	return ms[:exportPage], after + exportPage, nil
}

// importInto adds ms to st, through its Import when it is not a Store.
func importInto(ctx context.Context, st API, ms []Memory) (int, int, error) {
	if s, ok := st.(*Store); ok {
		return s.ImportMemories(ctx, ms)
	}
	if s, ok := st.(*QdrantStore); ok {
		return s.ImportMemories(ctx, ms)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, m := range ms {
		if err := enc.Encode(m); err != nil {
			return 0, 0, err
		}
	}
	return st.Import(ctx, &buf)
}
