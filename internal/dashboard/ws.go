package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/memory"
)

// Websocket timings and limits.
const (
	writeWait   = 10 * time.Second
	pingEvery   = 30 * time.Second
	readWait    = 75 * time.Second // a pong must come within it
	maxRequest  = 4 * bus.MaxBody  // room for a whole body, JSON-escaped
	requestWait = 10 * time.Second
)

// sameOrigin accepts a request without Origin (not a browser: it cannot be
// a cross-site request) or whose Origin is this very host:port.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	return u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// serveWS upgrades to a websocket and streams a workspace's feed:
// /ws?workspace=W&since=N&epoch=E.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		unauthorized(w)
		return
	}
	if !sameOrigin(r) {
		http.Error(w, "relay dashboard: websocket from another origin refused", http.StatusForbidden)
		return
	}
	q := r.URL.Query()
	ws := q.Get("workspace")
	if ws == "" {
		ws = s.opts.Workspace
	}
	var since uint64
	if v := q.Get("since"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			http.Error(w, "relay dashboard: since="+strconv.Quote(v)+" is not a sequence number", http.StatusBadRequest)
			return
		}
		since = n
	}
	f, err := s.feed(r.Context(), ws)
	if err != nil {
		http.Error(w, "relay dashboard: "+err.Error(), http.StatusBadRequest)
		return
	}
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }} // checked above
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered
	}
	s.conns.Add(1)
	defer s.conns.Done()
	s.runClient(conn, f, since, q.Get("epoch") == s.epoch)
}

// runClient writes the feed to conn (all writes happen here) while a
// reader goroutine handles the client's requests.
func (s *Server) runClient(conn *websocket.Conn, f *feed, since uint64, sameEpoch bool) {
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	out := make(chan Frame, 16)
	sel := make(chan string, 1)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		defer cancel()
		s.readRequests(ctx, conn, f, out, sel)
	}()
	defer func() {
		conn.Close()
		<-readerDone
	}()

	write := func(v any) bool {
		_ = conn.SetWriteDeadline(time.Now().Add(writeWait))
		var err error
		if b, ok := v.([]byte); ok {
			err = conn.WriteMessage(websocket.TextMessage, b)
		} else {
			err = conn.WriteJSON(v)
		}
		return err == nil
	}
	// catchUp sends what the client lacks after last: the events after it,
	// or a snapshot when they are no longer all in the ring (or when forced).
	// A first sync that resumes starts with a hello that is no snapshot.
	catchUp := func(last uint64, force, first bool) (uint64, <-chan struct{}, bool) {
		events, snap, head, wake := f.read(last, force)
		if snap != nil {
			hello := Frame{Type: TypeHello, Seq: head, Epoch: s.epoch, Workspace: f.ws, Human: s.opts.Human, Snapshot: true,
				Workspaces: s.workspaces(ctx, f)}
			if !write(hello) {
				return 0, nil, false
			}
			for _, fr := range snap {
				if !write(fr) {
					return 0, nil, false
				}
			}
			return head, wake, true
		}
		if first && !write(Frame{Type: TypeHello, Seq: last, Epoch: s.epoch, Workspace: f.ws, Human: s.opts.Human, Workspaces: s.workspaces(ctx, f)}) {
			return 0, nil, false
		}
		for _, e := range events {
			if !write(e) {
				return 0, nil, false
			}
		}
		return head, wake, true
	}

	last, wake, ok := catchUp(since, !sameEpoch || since == 0, true)
	if !ok {
		return
	}
	selected := ""
	var shownAt time.Time
	_, _, scrWake := f.screen("")
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	// The selected agent's wrapper publishes its screen only while asked
	// (bus.WatchScreen): asked at the select, and again while it stays.
	watch := time.NewTicker(bus.ScreenWatchEvery)
	defer watch.Stop()
	for {
		select {
		case <-ctx.Done():
			_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, ""), time.Now().Add(time.Second))
			return
		case <-wake:
			if last, wake, ok = catchUp(last, false, false); !ok {
				return
			}
		case fr := <-out:
			if !write(fr) {
				return
			}
		case selected = <-sel:
			shownAt = time.Time{}
			f.watchScreen(selected)
			watch.Reset(bus.ScreenWatchEvery)
			var scr bus.Screen
			var have bool
			scr, have, scrWake = f.screen(selected)
			if have && selected != "" {
				shownAt = scr.At
				if !write(Frame{Type: TypeScreen, Screen: &scr}) {
					return
				}
			}
		case <-scrWake:
			var scr bus.Screen
			var have bool
			scr, have, scrWake = f.screen(selected)
			if have && selected != "" && !scr.At.Equal(shownAt) {
				shownAt = scr.At
				if !write(Frame{Type: TypeScreen, Screen: &scr}) {
					return
				}
			}
		case <-watch.C:
			f.watchScreen(selected)
		case <-ping.C:
			if conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait)) != nil {
				return
			}
		}
	}
}

// readRequests handles what the client sends until the connection ends.
func (s *Server) readRequests(ctx context.Context, conn *websocket.Conn, f *feed, out chan<- Frame, sel chan string) {
	conn.SetReadLimit(maxRequest)
	_ = conn.SetReadDeadline(time.Now().Add(readWait))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(readWait)) })
	reply := func(fr Frame) bool {
		select {
		case out <- fr:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			return
		}
		_ = conn.SetReadDeadline(time.Now().Add(readWait))
		var req Request
		if err := json.Unmarshal(data, &req); err != nil {
			if !reply(Frame{Type: TypeError, Error: "bad request: " + err.Error()}) {
				return
			}
			continue
		}
		if req.Type == ReqSelect {
			if req.Agent != "" && bus.ValidName("agent", req.Agent) != nil {
				reply(Frame{Type: TypeError, Request: req.Type, Error: bus.ValidName("agent", req.Agent).Error()})
				continue
			}
			select { // keep only the latest choice
			case <-sel:
			default:
			}
			sel <- req.Agent
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, requestWait)
		fr := s.handle(rctx, f, req)
		cancel()
		if !reply(fr) {
			return
		}
	}
}

// handle answers one request other than select.
func (s *Server) handle(ctx context.Context, f *feed, req Request) Frame {
	fail := func(err error) Frame { return Frame{Type: TypeError, Request: req.Type, Error: err.Error()} }
	switch req.Type {
	case ReqSend:
		env, err := f.c.Send(ctx, req.To, req.Body)
		if errors.Is(err, bus.ErrUnknownAgent) {
			return Frame{Type: TypeSent, ID: env.ID, To: req.To, Warning: err.Error()}
		}
		if err != nil {
			return fail(err)
		}
		return Frame{Type: TypeSent, ID: env.ID, To: req.To}
	case ReqMemorySearch:
		rs, err := s.mem.Search(ctx, memory.Query{Text: req.Query, Filter: memory.Filter{Workspace: f.ws}})
		if err != nil {
			return fail(err)
		}
		if rs == nil {
			rs = []memory.Result{}
		}
		return Frame{Type: TypeMemoryResults, Query: req.Query, Results: rs}
	case ReqStop:
		// As `relay stop`: the agent's wrapper runs its SessionEnd hooks,
		// waits for that turn, then ends it (bus.ControlSubject).
		if _, err := f.c.Control(ctx, req.Agent, bus.Control{Op: bus.OpStop, By: "dashboard"}); err != nil {
			return fail(err)
		}
		return Frame{Type: TypeStopping, To: req.Agent}
	case ReqApprove:
		// As `relay approve`: the page holds the hub's token, a human's.
		c := bus.Control{Op: bus.OpApprove, Ask: req.ID, Deny: req.Deny, Reason: req.Reason, By: "dashboard"}
		if _, err := f.c.Control(ctx, req.Agent, c); err != nil {
			return fail(err)
		}
		return Frame{Type: TypeAnswered, To: req.Agent}
	case ReqMessage:
		e, ok := f.message(req.ID)
		if !ok {
			if err := bus.ValidName("message id", req.ID); err != nil {
				return fail(err)
			}
			err := f.c.Log(ctx, bus.LogOptions{ID: req.ID}, func(x bus.Entry) error { e, ok = x, true; return nil })
			if err != nil {
				return fail(err)
			}
		}
		if !ok {
			return fail(errors.New("no message " + strconv.Quote(req.ID) + " in the workspace's history"))
		}
		return Frame{Type: TypeMessage, Full: true, Message: toMessage(e, 0)}
	}
	return fail(errors.New("unknown request type " + strconv.Quote(req.Type) + " (want send, memory_search, select, message, stop or approve)"))
}
