//go:build measure

package opencode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents/opencode"
	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
)

// TestMeasureInputPaths compares the two ways into OpenCode: a bracketed
// paste and Enter into its TUI (what relay does), and its server's
// prompt_async for the session (--port). Each round, alternated, measures
// from the input to the model's request that holds it. Run by hand:
//
//	go test -tags 'sqlite_fts5 measure' -run TestMeasureInputPaths -v ./internal/agents/opencode/
func TestMeasureInputPaths(t *testing.T) {
	m, err := mockmodel.Start(mockmodel.APIChat, mockmodel.Options{Script: func(mockmodel.Request) mockmodel.Reply {
		return mockmodel.Reply{Text: "OK."}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := agenttest.OfflineCLI(t, "opencode", agenttest.OfflineOptions{Model: m.URL, ExtraArgs: []string{"--port", strconv.Itoa(port)}})
	term := agenttest.Start(t, cmd)
	start := time.Now()
	if _, err := term.WaitReady(300*time.Second, opencode.Ready); err != nil {
		t.Fatal(err)
	}
	t.Logf("ready after %v", time.Since(start).Round(time.Second))
	wait := func(s string) time.Duration {
		t0 := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
		defer cancel()
		if _, err := m.WaitForRequest(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return time.Since(t0)
	}
	idle := func() {
		if _, err := term.WaitReady(180*time.Second, opencode.Ready); err != nil {
			t.Fatal(err)
		}
	}
	typed := func(s string) time.Duration {
		t0 := time.Now()
		term.Paste(s)
		time.Sleep(opencode.Settle) // relay's pause between paste and Enter
		term.Enter()
		wait(s)
		return time.Since(t0)
	}
	typed("warm up")
	idle()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	var sessions []struct{ ID string }
	resp, err := http.Get(base + "/session")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&sessions)
	resp.Body.Close()
	if len(sessions) == 0 {
		t.Fatal("no session")
	}
	api := func(s string) time.Duration {
		t0 := time.Now()
		body, _ := json.Marshal(map[string]any{"parts": []map[string]any{{"type": "text", "text": s}}})
		resp, err := http.Post(base+"/session/"+sessions[0].ID+"/prompt_async", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("prompt_async: %s", resp.Status)
		}
		wait(s)
		return time.Since(t0)
	}
	for i := range 3 {
		d := typed(fmt.Sprintf("typed round %d", i))
		idle()
		a := api(fmt.Sprintf("api round %d", i))
		idle()
		t.Logf("round %d: typed %v, prompt_async %v", i, d.Round(100*time.Millisecond), a.Round(100*time.Millisecond))
	}
}
