package bus_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/relayhq/relay/bus"
)

func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"alice", true}, {"Bob-2", true}, {"claude_code", true}, {"7up", true},
		{strings.Repeat("a", bus.MaxNameLen), true},
		{"", false}, {"-lead", false}, {"_x", false}, {"a.b", false}, {"a b", false}, {"a*", false},
		{"a>", false}, {"é", false}, {strings.Repeat("a", bus.MaxNameLen+1), false},
	} {
		err := bus.ValidName("agent", tc.name)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, bus.ErrBadName)) {
			t.Errorf("ValidName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{"john.doe": "john-doe", "": "human", "...": "human", "_x": "x", "ok": "ok"} {
		if got := bus.SafeName(in, "human"); got != want {
			t.Errorf("SafeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseEnvelope(t *testing.T) {
	good := `{"id":"m1","workspace":"default","from":"alice","to":"bob","body":"hi","hops":1,"created":"2026-01-02T03:04:05Z"}`
	e, err := bus.ParseEnvelope([]byte(good))
	if err != nil || e.Kind != bus.KindMessage || e.Hops != 1 || e.Created.Year() != 2026 {
		t.Fatalf("ParseEnvelope(good) = %+v, %v", e, err)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"workspace":"default","from":"alice","to":"bob","body":"hi"}`, `field "id" is missing`},
		{`{"id":"m1","from":"alice","to":"bob","body":"hi"}`, `field "workspace" is missing`},
		{`{"id":"m1","workspace":"default","from":"alice","to":"bob"}`, `field "body" is missing`},
		{`{"id":"m 1","workspace":"default","from":"alice","to":"bob","body":"hi"}`, `message id name "m 1"`},
		{`{"id":"m1","workspace":"default","from":"alice","to":"bob","body":"hi","hops":-1}`, `hops is -1`},
		{`{"id":"m1","workspace":"default","from":"alice","to":"bob","body":"hi","kind":"spam"}`, `kind "spam"`},
		{"{\"id\":\"m1\",\"body\":\"\xff\"}", "not valid UTF-8 (at byte 19)"},
		{`[1,2]`, "not a JSON envelope"},
	} {
		_, err := bus.ParseEnvelope([]byte(tc.in))
		if !errors.Is(err, bus.ErrInvalidEnvelope) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseEnvelope(%s) = %v, want an invalid envelope error containing %q", tc.in, err, tc.want)
		}
	}
}

func FuzzParseEnvelope(f *testing.F) {
	f.Add([]byte(`{"id":"m1","workspace":"default","from":"alice","to":"bob","body":"hi"}`))
	f.Add([]byte(`{"id":"m1","workspace":"default","from":"alice","to":"*","body":"\u0000\ud800","hops":3,"kind":"notice"}`))
	f.Add([]byte("{\"body\":\"\xc3\"}"))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := bus.ParseEnvelope(data)
		if err != nil {
			if !errors.Is(err, bus.ErrInvalidEnvelope) {
				t.Fatalf("error %v does not wrap ErrInvalidEnvelope", err)
			}
			return
		}
		if e.Validate() != nil || !utf8.ValidString(e.Body) || len(e.Body) > bus.MaxBody || e.ID == "" {
			t.Fatalf("accepted an invalid envelope %+v", e)
		}
	})
}
