package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// handshake is what a client writes first: initialize, then initialized.
const handshake = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`

// reply is one JSON-RPC response as the server wrote it.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// runStdio serves in on a server acting as Alice over b, as relay mcp does
// on its stdin and stdout, and returns the replies by id (their raw JSON:
// "null" for an id that could not be read) and Run's error.
func runStdio(t *testing.T, b *fakeBus, in string) (map[string][]reply, error) {
	t.Helper()
	s, err := New(Options{Name: "Alice", Agent: true, Workspace: "w",
		Connect: func(context.Context) (Team, error) { return Team{Bus: b}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runErr := s.Run(ctx, strings.NewReader(in), &out)
	replies := map[string][]reply{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if line == "" {
			continue
		}
		var r reply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("the server wrote a line that is not JSON: %q", line)
		}
		id := string(r.ID)
		if id == "" {
			id = "missing"
		}
		replies[id] = append(replies[id], r)
	}
	return replies, runErr
}

// TestStdioMalformedLines: a line that is not JSON is answered with a parse
// error (-32700), JSON that is not a request with an invalid-request error
// (-32600), with the request's id where it can be read and null where not;
// the server goes on and answers the next request.
func TestStdioMalformedLines(t *testing.T) {
	for _, c := range []struct {
		name, line string
		id         string // the id of the error reply; "" for no reply
		code       int
	}{
		{"not json", `{not json`, "null", -32700},
		{"invalid bytes", "\xff\xfe\x00garbage", "null", -32700},
		{"truncated", `{"jsonrpc":"2.0","id":5,"method":"pi`, "null", -32700},
		{"empty batch", `[]`, "null", -32600},
		{"batch", `[{"jsonrpc":"2.0","id":6,"method":"ping"}]`, "null", -32600},
		{"object as id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, "null", -32600},
		{"array as id", `{"jsonrpc":"2.0","id":[7],"method":"ping"}`, "null", -32600},
		{"a string", `"hello"`, "null", -32600},
		{"a number", `42`, "null", -32600},
		{"wrong version", `{"jsonrpc":"1.0","id":8,"method":"ping"}`, "8", -32600},
		{"no version", `{"id":9,"method":"ping"}`, "9", -32600},
		{"method not a string", `{"jsonrpc":"2.0","id":10,"method":5}`, "10", -32600},
		{"neither request nor response", `{"jsonrpc":"2.0","id":11}`, "11", -32600},
		{"unknown method", `{"jsonrpc":"2.0","id":12,"method":"no/such"}`, "12", -32601},
		{"too long", `{"jsonrpc":"2.0","id":13,"method":"ping","params":{"x":"` + strings.Repeat("x", maxLine) + `"}}`, "null", -32600},
		{"blank line", `   `, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := handshake + c.line + "\n" + `{"jsonrpc":"2.0","id":99,"method":"ping"}` + "\n"
			replies, err := runStdio(t, &fakeBus{}, in)
			if err != nil {
				t.Fatalf("Run ended with %v; want nil after the client's end of input", err)
			}
			if len(replies["99"]) != 1 || replies["99"][0].Error != nil {
				t.Errorf("the ping after the bad line: replies %+v; want one result", replies["99"])
			}
			if c.id == "" {
				if len(replies) != 2 {
					t.Errorf("replies %v; want only the initialize and the ping answered", replies)
				}
				return
			}
			got := replies[c.id]
			if len(got) != 1 || got[0].Error == nil || got[0].Error.Code != c.code {
				t.Fatalf("replies with id %s: %+v (all: %v); want one error %d", c.id, got, replies, c.code)
			}
			if got[0].Error.Message == "" {
				t.Error("the error has no message")
			}
		})
	}
}

// TestStdioEOFAfterCall: a tools/call followed at once by the end of input
// is carried out and answered before Run returns.
func TestStdioEOFAfterCall(t *testing.T) {
	b := &fakeBus{}
	in := handshake + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"send","arguments":{"to":"Bob","message":"last words"}}}` + "\n"
	replies, err := runStdio(t, b, in)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(b.sent) != 1 || b.sent[0].Body != "last words" {
		t.Errorf("sent %+v; want the message to Bob", b.sent)
	}
	if r := replies["2"]; len(r) != 1 || r[0].Error != nil || !strings.Contains(string(r[0].Result), "Sent to Bob") {
		t.Errorf("reply to the call: %+v; want its result", r)
	}
}
