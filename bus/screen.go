package bus

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// Screen is what an agent's terminal shows, as text from the wrapper's
// screen model: a live view for the dashboard, not stored anywhere.
type Screen struct {
	Agent string    `json:"agent"`
	Cols  int       `json:"cols"`
	Rows  int       `json:"rows"`
	Text  string    `json:"text"` // the visible rows, joined by "\n", trailing blanks trimmed
	At    time.Time `json:"at"`
}

// ScreenSubject is where an agent's screen is published:
// relay.<workspace>.screen.<agent>. It is plain NATS (not in the
// workspace's stream): whoever subscribes sees the screen from then on.
func ScreenSubject(workspace, agent string) string {
	return "relay." + workspace + ".screen." + agent
}

// ScreenWatchSubject is where a viewer asks agent's wrapper for its
// screen: relay.<workspace>.screen.<agent>.watch (under the screen's own
// subject, so that whoever may carry an agent's screen may carry this).
func ScreenWatchSubject(workspace, agent string) string {
	return ScreenSubject(workspace, agent) + ".watch"
}

// A wrapper publishes its agent's screen only while a viewer watches it
// (issue 34: a dozen agents redrawing spinners, and nobody looking, cost
// their machine a publish each twice a second). A viewer asks every
// ScreenWatchEvery while it shows the screen; the wrapper publishes for
// ScreenWatchFor after each ask, and at once when asked.
const (
	ScreenWatchEvery = 10 * time.Second
	ScreenWatchFor   = 3 * ScreenWatchEvery
)

// WatchScreen asks agent's wrapper to publish its screen, at once and for
// the next ScreenWatchFor (a viewer repeats it every ScreenWatchEvery).
// Nothing waits for an answer: the screen comes on ScreenSubject.
func (c *Client) WatchScreen(agent string) error {
	if err := ValidName("agent", agent); err != nil {
		return fmt.Errorf("watch screen: %w", err)
	}
	if err := c.nc.Publish(ScreenWatchSubject(c.opts.Workspace, agent), nil); err != nil {
		return fmt.Errorf("watch screen of %s: %w", agent, err)
	}
	return nil
}

// OnScreenWatch calls fn, on the connection's own goroutine (it must not
// block), each time a viewer asks for this client's screen; stop ends it.
func (c *Client) OnScreenWatch(fn func()) (stop func(), err error) {
	if c.opts.Name == "" {
		return nil, errors.New("screen watch: no agent name")
	}
	sub, err := c.nc.Subscribe(ScreenWatchSubject(c.opts.Workspace, c.opts.Name), func(*nats.Msg) { fn() })
	if err != nil {
		return nil, fmt.Errorf("screen watch of %s: %w", c.opts.Name, err)
	}
	return func() { _ = sub.Unsubscribe() }, nil
}

// SetCLI records the agent program ("Claude Code", "Codex", "Gemini CLI",
// "shell") shown in presence. It is written with the next presence update
// (SetState, a heartbeat, or Register).
func (c *Client) SetCLI(cli string) { c.cli.Store(cli) }

// SetSkipped records how many bytes of output the wrapper's scanner has
// skipped so far, shown in presence. It is written with the next presence
// update, like SetCLI.
func (c *Client) SetSkipped(n int64) { c.skipped.Store(n) }

// PublishScreen publishes s on ScreenSubject; an empty s.Agent means this
// client's name and a zero s.At means now. Nothing is stored and nothing
// waits for subscribers: call it when the screen changed (the wrapper does
// at most twice a second, and only while a viewer watches: OnScreenWatch).
func (c *Client) PublishScreen(s Screen) error {
	if s.Agent == "" {
		s.Agent = c.opts.Name
	}
	if s.Agent == "" {
		return errors.New("publish screen: no agent name")
	}
	if err := ValidName("agent", s.Agent); err != nil {
		return fmt.Errorf("publish screen: %w", err)
	}
	if s.At.IsZero() {
		s.At = time.Now().UTC()
	}
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("publish screen of %s: %w", s.Agent, err)
	}
	if err := c.nc.Publish(ScreenSubject(c.opts.Workspace, s.Agent), b); err != nil {
		return fmt.Errorf("publish screen of %s: %w", s.Agent, err)
	}
	return nil
}
