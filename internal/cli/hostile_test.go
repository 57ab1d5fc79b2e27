package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/memory"
	"github.com/relayhq/relay/internal/testing/ptytest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// hostile is what an attacker who holds the workspace token plants: an OSC
// 52 clipboard write, a screen clear, an OSC 0 window title, an 8-bit CSI
// and a carriage return that would hide what came before it.
const hostile = "x \x1b]52;c;ZWNobyBwd25lZA==\x07 \x1b[2J \x1b]0;pwned\x07 \u009b31m \rend"

// checkTerminalSafe fails when what a program wrote to its terminal holds
// a byte the terminal would obey: a control other than the CR LF the
// terminal itself adds, DEL, a C1 control, or invalid UTF-8.
func checkTerminalSafe(t *testing.T, what string, out []byte) {
	t.Helper()
	if i := bytes.IndexByte(out, 0x1b); i >= 0 {
		t.Errorf("%s: ESC at byte %d reaches the terminal:\n%q", what, i, out)
		return
	}
	for i, c := range out {
		if (c < 0x20 && c != '\r' && c != '\n') || c == 0x7f {
			t.Errorf("%s: control byte %#x at %d reaches the terminal:\n%q", what, c, i, out)
			return
		}
	}
	if !utf8.Valid(out) {
		t.Errorf("%s: invalid UTF-8 reaches the terminal:\n%q", what, out)
	}
	for _, r := range string(out) {
		if r >= 0x80 && r <= 0x9f {
			t.Errorf("%s: C1 control %U reaches the terminal:\n%q", what, r, out)
			return
		}
	}
}

// hostileHub runs a hub with its memory service in a fresh home and plants
// escapes in a message (body and receipt reason), a forged presence record
// and a memory. It returns the home and the planted message's id.
func hostileHub(t *testing.T) (home, msgID string) {
	t.Helper()
	home = testutil.Home(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h, err := hub.Start(ctx, hub.Options{Home: home, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Shutdown)
	stopMem, err := serveMemory(ctx, &Env{Getenv: func(string) string { return "" }}, h, home, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopMem)
	ep := h.Endpoint()
	connect := func(name string) *bus.Client {
		c, err := bus.Connect(ctx, bus.Options{URL: ep.URL, Token: ep.Token, Name: name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	mallory, bob := connect("mallory"), connect("bob")
	e, err := mallory.Send(ctx, "bob", hostile)
	if err != nil && !errors.Is(err, bus.ErrUnknownAgent) { // stored all the same
		t.Fatal(err)
	}
	if err := bob.Receipt(ctx, e, bus.StatusFailed, "reason "+hostile); err != nil {
		t.Fatal(err)
	}

	// A presence record as any token holder can write it.
	nc, err := bus.Dial(ctx, bus.Options{URL: ep.URL, Token: ep.Token}, "mallory-presence")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, bus.PresenceBucket(bus.DefaultWorkspace))
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(map[string]any{
		"state": "\x1b]0;owned\x07idle", "since": time.Now().UTC(), "session": "s",
		"heartbeat_ms": 3_600_000, "cli": "\x1b[2JClaude\tCode",
	})
	if _, err := kv.Put(ctx, "mallory", rec); err != nil {
		t.Fatal(err)
	}

	mc := memory.NewClient(nc, memory.DefaultSubjectPrefix)
	if _, _, err := mc.Save(ctx, memory.Memory{Text: "remember " + hostile, Author: "mallory", Workspace: bus.DefaultWorkspace}); err != nil {
		t.Fatal(err)
	}
	return home, e.ID
}

// onTerminal runs relay ARGS on a pseudo-terminal in dir and returns every
// byte it wrote there. A shell runs it and then prints a mark, so that the
// mark's arrival says every byte relay wrote has been read.
func onTerminal(t *testing.T, exe, home, dir string, args ...string) []byte {
	t.Helper()
	const mark = "__relay_exited_"
	argv := append([]string{"/bin/sh", "-c", `"$0" "$@"; echo "` + mark + `$?"`, exe}, args...)
	tm := ptytest.Start(t, ptytest.Options{Dir: dir, Env: hostileEnv(t, home)}, argv...)
	tm.WaitOutput(mark, 60*time.Second)
	out := tm.Output()
	return out[:bytes.Index(out, []byte(mark))]
}

func hostileEnv(t *testing.T, home string) []string {
	return []string{"RELAY_HOME=" + home, "HOME=" + t.TempDir(), "USER=tester", "PATH=/usr/bin:/bin", "TERM=xterm"}
}

// TestHostileTextNeverReachesTheTerminal plants escape sequences where a
// token holder or a committed file can put them and reads back, byte for
// byte from a real pseudo-terminal, what each command shows the human.
func TestHostileTextNeverReachesTheTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a hub and relay processes")
	}
	exe := relayTestExe(t)
	home, id := hostileHub(t)
	work := t.TempDir()

	cases := []struct {
		name string
		args []string
		want string // the planted text, shown visibly
	}{
		{"log", []string{"log"}, `\x1b]52;c;ZWNobyBwd25lZA==\x07`},
		{"log --id", []string{"log", "--id", id}, `\x1b[2J`},
		{"log receipt reason", []string{"log", "-n", "1"}, `(reason x \x1b]52`},
		{"agents", []string{"agents"}, `\x1b]0;owned\x07idle`},
		{"memory list", []string{"memory", "list"}, `\x1b[2J`},
		{"memory search", []string{"memory", "search", "remember"}, `\x1b[2J`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := onTerminal(t, exe, home, work, c.args...)
			checkTerminalSafe(t, c.name, out)
			if !bytes.Contains(out, []byte(c.want)) {
				t.Errorf("%s: want the planted text shown as %q; got:\n%q", c.name, c.want, out)
			}
		})
	}

	t.Run("memory get and forget", func(t *testing.T) {
		var ms []memory.Memory
		out := onTerminal(t, exe, home, work, "memory", "list", "--json")
		if err := json.Unmarshal(bytes.ReplaceAll(out, []byte("\r\n"), []byte("\n")), &ms); err != nil || len(ms) != 1 {
			t.Fatalf("memory list --json: %v, %d memories:\n%q", err, len(ms), out)
		}
		for _, verb := range []string{"get", "forget"} {
			out := onTerminal(t, exe, home, work, "memory", verb, ms[0].ID)
			checkTerminalSafe(t, "memory "+verb, out)
			if !bytes.Contains(out, []byte(`\x1b]52`)) {
				t.Errorf("memory %s: want the planted text shown; got:\n%q", verb, out)
			}
		}
	})

	t.Run("log --follow", func(t *testing.T) {
		tm := ptytest.Start(t, ptytest.Options{Dir: work, Env: hostileEnv(t, home)}, exe, "log", "--follow")
		tm.WaitOutput(`\x1b]0;pwned\x07`, 30*time.Second)
		tm.Signal(syscall.SIGINT)
		tm.Wait(30 * time.Second)
		checkTerminalSafe(t, "log --follow", tm.Output())
	})

	t.Run("config key", func(t *testing.T) {
		proj := t.TempDir()
		if err := os.MkdirAll(filepath.Join(proj, ".relay"), 0o755); err != nil {
			t.Fatal(err)
		}
		toml := "\"\\u001b[2J\" = 1\n[hub]\n\"\\u001b]0;pwn\\u0007\" = 2\n"
		if err := os.WriteFile(filepath.Join(proj, ".relay", "config.toml"), []byte(toml), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"config", "check"}, {"config", "show"}, {"doctor"}, {"log"}, {"send", "bob", "hi"}} {
			out := onTerminal(t, exe, home, proj, args...)
			checkTerminalSafe(t, "relay "+args[0]+" with a hostile config key", out)
			if !bytes.Contains(out, []byte(`\x1b[2J: unknown key`)) {
				t.Errorf("relay %v: want the key shown as \\x1b[2J; got:\n%q", args, out)
			}
		}
	})
}
