package bus

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
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
// at most twice a second).
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
