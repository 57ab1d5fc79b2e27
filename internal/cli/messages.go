package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/hubdial"
	"github.com/relayhq/relay/internal/natscreds"
	"github.com/relayhq/relay/internal/termsafe"
)

// hubFlags are the flags shared by the commands that talk to the hub.
type hubFlags struct {
	hub       string // --hub: a NATS URL; "" means RELAY_HUB, config, or the local hub
	creds     string // --creds: a NATS credentials file
	tlsCA     string // --tls-ca: the CA of a TLS hub's certificate
	workspace string // --workspace
}

func addHubFlags(fs *flag.FlagSet, f *hubFlags) {
	fs.StringVar(&f.hub, "hub", "", "NATS `URL` of an external server or cluster (default: RELAY_HUB, config, else the local hub)")
	fs.StringVar(&f.creds, "creds", "", "NATS credentials `file` for an external server (default: RELAY_CREDS, config)")
	fs.StringVar(&f.tlsCA, "tls-ca", "", "PEM `file` of the CA that signed a TLS hub's certificate (default: RELAY_TLS_CA, config)")
	fs.StringVar(&f.workspace, "workspace", "", "workspace `name` (default: RELAY_WORKSPACE, config, else \"default\")")
}

// busOptions resolves where the hub is and which workspace to join:
// flags > environment > configuration files > the local hub of RELAY_HOME.
// With start, a missing local hub is started detached (as relay wrap
// does); without, it is an error that says how to start one.
func busOptions(ctx context.Context, env *Env, f *hubFlags, start bool) (bus.Options, error) {
	var o bus.Options
	dir, _ := os.Getwd()
	cfg, err := config.Load(config.Sources{ProjectDir: dir, Env: env.getenv, Flags: config.Flags{Workspace: f.workspace, Hub: f.hub, TLSCA: f.tlsCA}})
	if err != nil {
		var ce config.Errors
		if errors.As(err, &ce) {
			return o, usagef("configuration: %v", err)
		}
		return o, err
	}
	o.Workspace = cfg.Workspace
	if err := bus.ValidName("workspace", o.Workspace); err != nil {
		return o, usagef("%v", err)
	}
	id, err := agentIdentity(env)
	if err != nil {
		return o, err
	}
	if useIdentity(&o, id, f) { // inside a wrapped agent: as that agent
		return o, nil
	}
	r := hubResolver(env, cfg)
	if f.creds != "" {
		r.Creds = f.creds
	}
	if r.URL != "" { // an external server
		r.Home, _ = env.Home()
		ws := o.Workspace
		o, err = r.External()
		o.Workspace = ws
		return withCredsInbox(o), err
	}
	// Only a command that may start a hub creates the state folder: one
	// that only reads (relay log, agents) leaves no trace without a hub.
	home, err := env.Home()
	if start {
		home, err = env.EnsureHome()
	}
	if err != nil {
		return o, err
	}
	ep, err := hub.Discover(home)
	if errors.Is(err, hub.ErrNoHub) && start {
		ep, err = hub.EnsureRunning(ctx, home, env.Executable)
	}
	if errors.Is(err, hub.ErrNoHub) {
		return o, fmt.Errorf("%w; start one with `relay up --detach`, or point at one with --hub or RELAY_HUB", err)
	}
	local := hubdial.Local(home, ep)
	local.Workspace, local.Creds, local.TLSCA = o.Workspace, r.Creds, r.TLSCA
	return withCredsInbox(local), err
}

// withCredsInbox gives o the reply prefix its credentials allow: an
// agent's own .creds reads only its own replies.
func withCredsInbox(o bus.Options) bus.Options {
	if o.Creds != "" {
		o.InboxPrefix = natscreds.InboxPrefix(o.Creds)
	}
	return o
}

// hubResolver is what the configuration and the environment say about the
// hub (RELAY_TOKEN and RELAY_CREDS over the files), for every command and
// relay wrap.
func hubResolver(env *Env, cfg *config.Config) *hubdial.Resolver {
	r := &hubdial.Resolver{URL: cfg.Hub.URL, Token: env.getenv("RELAY_TOKEN"), TokenFile: cfg.Hub.TokenFile,
		Creds: cfg.Hub.Creds, TLSCA: cfg.Hub.TLSCA}
	if c := env.getenv("RELAY_CREDS"); c != "" {
		r.Creds = c
	}
	return r
}

// connectBus connects as name to the hub that busOptions finds.
func connectBus(ctx context.Context, env *Env, f *hubFlags, name string, start bool) (*bus.Client, error) {
	o, err := busOptions(ctx, env, f, start)
	if err != nil {
		return nil, err
	}
	o.Name = name
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return bus.Connect(cctx, o)
}

// defaultSender is who `relay send` sends as: $USER, else "human".
func defaultSender(env *Env) string {
	return bus.SafeName(env.getenv("USER"), "human")
}

func runSend(ctx context.Context, env *Env, args []string) error {
	var hf hubFlags
	var from, msgID string
	var asJSON bool
	var timeout time.Duration
	var wait string
	fs := newFlags(env, "send", "[--from NAME] [--id ID] [--wait STAGE] [--timeout D] TARGET MESSAGE…\n\nTARGET is an agent's name or * for every agent of the workspace; MESSAGE - reads it from stdin.\nExit status 0 once the hub stored the message (with --wait: once every recipient reached STAGE); else 1, with the reason, within --timeout.\nWith --wait answered the answer's text is printed on stdout.")
	addHubFlags(fs, &hf)
	fs.StringVar(&from, "from", "", "send as `name` (default: $USER, else human)")
	fs.BoolVar(&asJSON, "json", false, "print the sent envelope as JSON")
	fs.StringVar(&msgID, "id", "", "the message's `id` (default: a new one); sending again with the id of a send that failed keeps one copy")
	fs.DurationVar(&timeout, "timeout", sendTimeout, "give up, saying why, when the hub has not stored the message (with --wait: it has not reached the stage) within `duration` (default 30s; with --wait 60s)")
	fs.StringVar(&wait, "wait", "", "wait until every recipient reached `stage`: delivered (typed and submitted), seen (the agent's model or shell was given it) or answered (it sent the sender a message after)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	want, err := parseWait(wait)
	if err != nil {
		return err
	}
	if want != "" && !flagSet(fs, "timeout") {
		timeout = sendWaitTimeout
	}
	if fs.NArg() < 2 {
		return usagef("want a target and a message, e.g. relay send bob 'please run the tests'")
	}
	target := fs.Arg(0)
	body := strings.Join(fs.Args()[1:], " ")
	if body == "-" {
		b, err := io.ReadAll(io.LimitReader(env.Stdin, bus.MaxBody+1))
		if err != nil {
			return fmt.Errorf("read message from stdin: %w", err)
		}
		body = strings.TrimRight(string(b), "\n")
	}
	id, err := agentIdentity(env)
	if err != nil {
		return err
	}
	if id != nil && hf.hub == "" {
		if want != "" {
			return usagef("--wait: inside agent %s, relay send hands the message to its wrapper and cannot read the log; the answer comes in as a message", id.Name)
		}
		return sendAsAgent(ctx, env, id, from, target, body, asJSON)
	}
	if from == "" {
		from = defaultSender(env)
	}
	if err := bus.ValidName("sender", from); err != nil {
		return usagef("--from: %v", err)
	}
	if target != bus.Broadcast {
		if err := bus.ValidName("target", target); err != nil {
			return usagef("%v", err)
		}
	}
	if len(body) > bus.MaxBody {
		return usagef("message is %d bytes or more; the limit is %d", len(body), bus.MaxBody)
	}
	if msgID != "" {
		if err := bus.ValidName("message id", msgID); err != nil {
			return usagef("--id: %v", err)
		}
	}
	if timeout <= 0 {
		return usagef("--timeout %v: want a positive duration", timeout)
	}
	// One deadline for the whole command: finding the hub, connecting,
	// storing. Under load each takes longer; none may wait past it.
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	o, err := busOptions(ctx, env, &hf, false)
	if err != nil {
		return err
	}
	// A human or a script: marked so, with the user's name.
	o.Name, o.Human = from, true
	c, err := bus.Connect(ctx, o)
	if err != nil {
		return fmt.Errorf("not sent: %w", err)
	}
	defer closeWithin(c, sendCloseWait)
	e, err := c.SendMessage(ctx, bus.Message{ID: msgID, To: target, Body: body})
	if errors.Is(err, bus.ErrInvalidEnvelope) {
		return usagef("%v", err)
	}
	if err != nil && !errors.Is(err, bus.ErrUnknownAgent) {
		return notStored(err, e.ID, timeout, ctx.Err() != nil)
	}
	if err != nil { // stored all the same: tell the human, succeed
		fmt.Fprintf(env.Stderr, "relay send: note: %s\n", termsafe.Text(err.Error()))
	}
	if asJSON {
		if err := json.NewEncoder(env.Stdout).Encode(e); err != nil || want == "" {
			return err
		}
		return awaitSent(ctx, env, c, e, want, timeout, true)
	}
	sentTo := env.Stdout
	if want == bus.StatusAnswered {
		sentTo = env.Stderr // stdout is the answer's
	}
	fmt.Fprintf(sentTo, "sent %s to %s in workspace %s\n", termsafe.Line(e.ID), termsafe.Line(target), termsafe.Line(c.Workspace()))
	if want != "" {
		return awaitSent(ctx, env, c, e, want, timeout, false)
	}
	return nil
}

// flagSet reports whether the flag name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// sendTimeout is how long relay send may take, by default, from start to
// the hub's acknowledgement; sendCloseWait how long it then waits for the
// connection to close (the message is stored: nothing is lost past it).
const (
	sendTimeout   = 30 * time.Second
	sendCloseWait = 2 * time.Second
)

// notStored says why relay send failed once it had a connection: the hub
// did not store the message (or did not say so in time), and how to try
// again without a second copy.
func notStored(err error, id string, timeout time.Duration, late bool) error {
	why := ""
	if late {
		why = fmt.Sprintf(" within %v (the hub did not acknowledge it: overloaded or unreachable; raise --timeout)", timeout)
	}
	return fmt.Errorf("not stored%s: %w; it may have been stored all the same (`relay log --id %s` says): send again with --id %s and the hub keeps one copy",
		why, err, id, id)
}

// closeWithin closes c, waiting at most d: a hub that stopped answering
// after it stored the message must not hold the command up.
func closeWithin(c *bus.Client, d time.Duration) {
	done := make(chan struct{})
	go func() { c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

func runAgents(ctx context.Context, env *Env, args []string) error {
	var hf hubFlags
	var asJSON bool
	fs := newFlags(env, "agents", "[--json]")
	addHubFlags(fs, &hf)
	fs.BoolVar(&asJSON, "json", false, "print one JSON object per agent")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	c, err := connectBus(ctx, env, &hf, "", false)
	if err != nil {
		return err
	}
	defer c.Close()
	agents, err := c.Agents(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(env.Stdout)
		for _, a := range agents {
			if err := enc.Encode(a); err != nil {
				return err
			}
		}
		return nil
	}
	if len(agents) == 0 {
		fmt.Fprintf(env.Stdout, "no agents in workspace %s\n", termsafe.Line(c.Workspace()))
		return nil
	}
	return writeAgents(env.Stdout, time.Now(), agents)
}

// writeAgents prints the table of relay agents.
func writeAgents(w io.Writer, now time.Time, agents []bus.Presence) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCLI\tSTATE\tSINCE\tLAST SEEN\tPENDING\tSKIPPED")
	for _, a := range agents {
		cli := a.CLI
		if cli == "" {
			cli = "-"
		}
		// Any token holder can publish a presence record: its fields are
		// shown, never obeyed, and a tab in one cannot shift the columns.
		state := string(a.State)
		if a.State == bus.StateStuck {
			state += " (oldest " + strings.TrimSuffix(ago(now, a.WaitingSince), " ago") + ")"
		}
		if a.State == bus.StateBlocked && a.Ask != nil {
			state += " (" + askSummary(*a.Ask, 60) + ")"
		}
		if !a.Revoked.IsZero() {
			state += " (credentials revoked)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", termsafe.Line(a.Name), termsafe.Line(cli), termsafe.Line(state),
			ago(now, a.Since), ago(now, a.Seen), a.Pending, skippedBytes(a.Skipped))
	}
	return tw.Flush()
}

// ago is age followed by "ago", or "-" for a time not known (a presence
// record without it: zero).
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return age(now, t) + " ago"
}

// age is a short human duration: 4s, 3m12s, 2h5m, 3d4h.
func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	case d < 24*time.Hour:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	default:
		return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
	}
}

func runLog(ctx context.Context, env *Env, args []string) error {
	var hf hubFlags
	var o bus.LogOptions
	var asJSON bool
	var since string
	fs := newFlags(env, "log", "[-n N] [--since WHEN] [--follow] [--json] [--agent NAME] [--id ID]")
	addHubFlags(fs, &hf)
	fs.IntVar(&o.Last, "n", 0, "only the last `N` messages (default: all)")
	fs.StringVar(&since, "since", "", "only messages since `WHEN`: a duration back from now (90m, 2h) or a time (2026-12-03T15:04:05Z, \"2026-12-03 15:04\")")
	fs.BoolVar(&o.Follow, "follow", false, "keep printing new messages and status changes until interrupted")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object per message (per change with --follow)")
	fs.StringVar(&o.Agent, "agent", "", "only messages from or to agent `name`")
	fs.StringVar(&o.ID, "id", "", "only the message with this `id`, with every stage at each recipient and its time")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if o.Last < 0 {
		return usagef("-n %d: want a number of messages, 1 or more", o.Last)
	}
	if since != "" {
		t, err := parseSince(since, time.Now())
		if err != nil {
			return usagef("--since: %v", err)
		}
		o.Since = t
	}
	if id, err := agentIdentity(env); err != nil {
		return err
	} else if id != nil && id.Token != "" && hf.hub == "" {
		// Said at once, not after the server refused and a timeout.
		return fmt.Errorf("relay log reads every agent's messages, which agent %s's own credential may not; run it outside the agent (with the workspace token)", id.Name)
	}
	c, err := connectBus(ctx, env, &hf, "", false)
	if err != nil {
		return err
	}
	defer c.Close()
	enc := json.NewEncoder(env.Stdout)
	n := 0
	err = c.Log(ctx, o, func(e bus.Entry) error {
		n++
		if asJSON {
			return enc.Encode(e)
		}
		line := formatEntry(e) + "\n"
		if o.ID != "" {
			line += formatStages(e)
		}
		_, err := io.WriteString(env.Stdout, line)
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 && !asJSON && !o.Follow {
		fmt.Fprintf(env.Stderr, "no messages in workspace %s\n", termsafe.Line(c.Workspace()))
	}
	return nil
}

// parseSince reads --since: a duration back from now, or a time (RFC 3339,
// or "YYYY-MM-DD[ HH:MM[:SS]]" in the local zone).
func parseSince(v string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(v); err == nil {
		if d <= 0 {
			return time.Time{}, fmt.Errorf("%q: want a positive duration back from now", v)
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, v, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration (90m, 2h) nor a time (2026-12-03T15:04:05Z, \"2026-12-03 15:04\")", v)
}

// formatEntry is one line of `relay log`:
// TIME ID FROM -> TO [RECIPIENT:STATUS ...] BODY
// Every field came from a peer (body, receipt reasons) or the hub, so the
// line goes through termsafe.Line: a new line in the body shows as \n, an
// escape sequence as \x1b.
func formatEntry(e bus.Entry) string {
	names := make([]string, 0, len(e.Status))
	for n := range e.Status {
		names = append(names, n)
	}
	sort.Strings(names)
	var st []string
	for _, n := range names {
		s := n + ":" + string(e.Status[n])
		if r := e.Reasons[n]; r != "" {
			s += " (" + r + ")"
		}
		st = append(st, s)
	}
	when := "-"
	if !e.Created.IsZero() {
		when = e.Created.Local().Format("2006-01-02 15:04:05")
	}
	body := e.Body
	if e.Invalid != "" {
		body = "(rejected: " + e.Invalid + ")"
	}
	return termsafe.Line(fmt.Sprintf("%s  %s  %s -> %s  [%s]  %s", when, e.ID, orDash(e.From), orDash(e.To), strings.Join(st, " "), body))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// skippedBytes shows how much output an agent's scanner skipped ("-" for
// none): commands in it were not seen.
func skippedBytes(n int64) string {
	switch {
	case n <= 0:
		return "-"
	case n < 1<<20:
		return fmt.Sprintf("%d KiB", (n+1023)>>10)
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}
