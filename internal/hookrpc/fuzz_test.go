package hookrpc

import (
	"bytes"
	"io"
	"testing"
)

// FuzzReadJSON feeds arbitrary bytes to the request reader: it never
// panics, never reads a value longer than its limit, and what follows the
// value stays readable.
func FuzzReadJSON(f *testing.F) {
	for _, s := range []string{`{"event":"Stop","payload":{"a":1}}` + "\x06", `{"event":"Stop","payload":null}`, `{"event":`,
		`{"payload":"` + string(bytes.Repeat([]byte("x"), 200)) + `"}`, `[]`, "\x06", `{"deadline":"nope"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 128
		var req Request
		rest, err := readJSON(bytes.NewReader(data), limit, &req, "request")
		if err != nil {
			if rest != nil {
				t.Fatal("a reader came back with an error")
			}
			return
		}
		tail, _ := io.ReadAll(rest)
		if consumed := len(data) - len(tail); consumed > limit+1 {
			t.Fatalf("read a value of %d bytes with a limit of %d", consumed, limit)
		}
		if !bytes.HasSuffix(data, tail) {
			t.Fatalf("the rest %q is not the input's end", tail)
		}
	})
}
