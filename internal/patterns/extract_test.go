package patterns

import (
	"strings"
	"testing"
)

// got is a compact view of a command for table tests.
type got struct {
	NS, Target, Body string
}

func extract(t *testing.T, mode Mode, lines []Line, extra ...string) []got {
	t.Helper()
	ns, err := NewNamespaces(extra...)
	if err != nil {
		t.Fatal(err)
	}
	var out []got
	for _, c := range New(Options{Namespaces: ns, Mode: mode}).Extract(lines) {
		out = append(out, got{c.NS, c.Target, c.Body})
	}
	return out
}

func text(lines ...string) []Line {
	out := make([]Line, len(lines))
	for i, l := range lines {
		out[i] = Line{Text: l}
	}
	return out
}

func TestExtractRules(t *testing.T) {
	tests := []struct {
		name  string
		mode  Mode
		lines []Line
		want  []got
	}{
		{"plain", Markdown, text("@relay:Bob Please run the tests"), []got{{"relay", "Bob", "Please run the tests"}}},
		{"leading space", Markdown, text("   @relay:Bob hi"), []got{{"relay", "Bob", "hi"}}},
		{"bullets and glyphs", Screen, text("● @relay:Bob a", "⏺ @relay:Bob b", "• @relay:Bob c", "✦ @relay:Bob d", "> @relay:Bob e", "› @relay:Bob f", "│ @relay:Bob g", "- @relay:Bob h", "* @relay:Bob i", "» @relay:Bob j", "┃ @relay:Bob k"),
			[]got{{"relay", "Bob", "a"}, {"relay", "Bob", "b"}, {"relay", "Bob", "c"}, {"relay", "Bob", "d"}, {"relay", "Bob", "e"}, {"relay", "Bob", "f"}, {"relay", "Bob", "g"}, {"relay", "Bob", "h"}, {"relay", "Bob", "i"}, {"relay", "Bob", "j"}, {"relay", "Bob", "k"}}},
		{"case-insensitive namespace", Markdown, text("@RELAY:Bob hi", "", "@Memory:save x"), []got{{"relay", "Bob", "hi"}, {"memory", "save", "x"}}},
		{"unknown namespace", Markdown, text("@deploy:staging go"), nil},
		{"email and host:port", Markdown, text("user@example.com:22 is the host", "@example.com:22 too"), nil},
		{"mid-line mention", Markdown, text("Ask @relay:Carol about it"), nil},
		{"broadcast has no target", Markdown, text("@broadcast: Deploy freeze at 17:00"), []got{{"broadcast", "", "Deploy freeze at 17:00"}}},
		{"broadcast without space", Markdown, text("@broadcast:freeze now"), []got{{"broadcast", "", "freeze now"}}},
		{"star target", Markdown, text("@relay:* Status: done"), []got{{"relay", "*", "Status: done"}}},
		{"target trailing comma", Markdown, text("@relay:Bob, please look"), []got{{"relay", "Bob", "please look"}}},
		{"continuation joined", Screen, text("● @relay:Bob Please run the integration", "  tests and report back.", "", "Done."),
			[]got{{"relay", "Bob", "Please run the integration tests and report back."}}},
		{"continuation ends at next command", Markdown, text("@relay:Bob one", "@relay:Carol two", "more"),
			[]got{{"relay", "Bob", "one"}, {"relay", "Carol", "two more"}}},
		{"continuation ends at fence", Markdown, text("@relay:Bob one", "```", "@relay:X code", "```", "after"),
			[]got{{"relay", "Bob", "one"}}},
		{"continuation ends at code line", Screen, []Line{{Text: "@relay:Bob one"}, {Text: "  code", Code: true}}, []got{{"relay", "Bob", "one"}}},
		{"continuation ends at escaped command", Markdown, text("@relay:Bob one", `\@relay:Carol two`), []got{{"relay", "Bob", "one"}}},
		{"block keeps line breaks", Markdown, text("@relay:Bob <<<", "line one", "  indented", "", "after blank", ">>>", "tail"),
			[]got{{"relay", "Bob", "line one\n  indented\n\nafter blank"}}},
		{"block without close ends at blank (markdown)", Markdown, text("@relay:Bob <<<", "a", "b", "", "Sent."),
			[]got{{"relay", "Bob", "a\nb"}}},
		{"block on screen ends at blank", Screen, text("● @relay:Bob <<<", "  Review checklist:", "  - check the migrations", "  - run make test", "", "  Sent."),
			[]got{{"relay", "Bob", "Review checklist:\n- check the migrations\n- run make test"}}},
		{"block keeps code on screen", Screen, []Line{{Text: "@relay:Bob <<<"}, {Text: "see:"}, {Text: "go test ./...", Code: true}, {Text: ""}},
			[]got{{"relay", "Bob", "see:\ngo test ./..."}}},
		{"escape", Markdown, text(`\@relay:Nobody escaped`), nil},
		{"double escape", Markdown, text(`\\@relay:Nobody literal backslash`), nil},
		{"escape after glyph", Screen, text(`● \@relay:Nobody escaped`), nil},
		{"code fence backticks", Markdown, text("```", "@relay:Example inside", "```"), nil},
		{"code fence tildes", Markdown, text("~~~go", "@relay:Example inside", "~~~", "@relay:Bob after"), []got{{"relay", "Bob", "after"}}},
		{"unclosed fence", Markdown, text("```", "@relay:Example inside"), nil},
		{"fence needs same char", Markdown, text("```", "~~~", "@relay:Example inside", "```", "@relay:Bob out"), []got{{"relay", "Bob", "out"}}},
		{"code line on screen", Screen, []Line{{Text: "  @relay:Example inside", Code: true}}, nil},
		{"injected never fires", Screen, []Line{{Text: "@relay:Alice reply here", Injected: true}}, nil},
		{"cont line never starts", Screen, []Line{{Text: "Inline mention like"}, {Text: "@relay:Carol in prose", Cont: true}}, nil},
		{"cont line joins body", Screen, []Line{{Text: "@relay:Bob one"}, {Text: "@relay:Carol two", Cont: true}}, []got{{"relay", "Bob", "one @relay:Carol two"}}},
		{"placeholders", Markdown, text("@relay:AgentName hi", "", "@relay:<name> hi", "", "@relay:NAME hi", "", "@relay:Name hi", "", "@relay:TARGET hi", "", "@relay:{name} hi", "", "@relay:[name] hi", "", "@relay:agent_name hi"), nil},
		{"placeholder body", Markdown, text("@relay:Alice <your reply>", "", "@relay:Bob ...", "", "@relay:Bob {message}"), nil},
		{"parenthesised body is prose", Markdown, text("@relay:Bob (see above)"), []got{{"relay", "Bob", "(see above)"}}},
		{"empty relay body", Markdown, text("@relay:Bob", "", "@relay:Bob   "), nil},
		{"empty broadcast body", Markdown, text("@broadcast:"), nil},
		{"relay needs a target", Markdown, text("@relay: hi"), nil},
		{"memory list with empty body fires", Markdown, text("@memory:list"), []got{{"memory", "list", ""}}},
		{"memory query of a template word fires", Markdown, text("@memory:search name"), []got{{"memory", "search", "name"}}},
		{"memory query in brackets does not", Markdown, text("@memory:search <query>"), nil},
		{"two commands in one chunk", Markdown, text("@relay:Bob a", "", "@broadcast: b"), []got{{"relay", "Bob", "a"}, {"broadcast", "", "b"}}},
		{"CRLF", Markdown, SplitLines("@relay:Bob one\r\ntwo\r\n\r\n@relay:Carol three\r\n"), []got{{"relay", "Bob", "one two"}, {"relay", "Carol", "three"}}},
		{"tabs", Markdown, text("\t@relay:Bob\tPlease\trun", "\tmore"), []got{{"relay", "Bob", "Please\trun more"}}},
		{"CJK and emoji", Screen, text("● @relay:太郎 テストを実行してください 🚀", "  完了したら報告 ✅"), []got{{"relay", "太郎", "テストを実行してください 🚀 完了したら報告 ✅"}}},
		{"emoji target", Markdown, text("@relay:🤖bot go"), []got{{"relay", "🤖bot", "go"}}},
		{"invalid UTF-8", Markdown, text("@relay:Bob caf\xe9 \xff done"), []got{{"relay", "Bob", "caf\uFFFD \uFFFD done"}}},
		{"invalid UTF-8 in target", Markdown, text("@relay:B\xffb hi"), []got{{"relay", "B\uFFFDb", "hi"}}},
		{"glyph-only line is blank", Screen, text("@relay:Bob one", "│", "two"), []got{{"relay", "Bob", "one"}}},
		{"namespace too long", Markdown, text("@" + strings.Repeat("a", 70) + ":x y"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			have := extract(t, tc.mode, tc.lines)
			if !equalGot(have, tc.want) {
				t.Errorf("\nhave %q\nwant %q", have, tc.want)
			}
		})
	}
}

func equalGot(a, b []got) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestUserNamespace(t *testing.T) {
	have := extract(t, Markdown, text("@deploy:staging Release v1.2.3", "", "@Deploy:prod now"), "deploy")
	want := []got{{"deploy", "staging", "Release v1.2.3"}, {"deploy", "prod", "now"}}
	if !equalGot(have, want) {
		t.Fatalf("have %q, want %q", have, want)
	}
	if _, err := NewNamespaces("bad name"); err == nil {
		t.Fatal("NewNamespaces accepted a name with a space")
	}
}

func TestPositionsAndTermination(t *testing.T) {
	x := New(Options{Mode: Screen})
	cmds := x.Extract(text("intro", "@relay:Bob one", "two", "", "@relay:Carol three"))
	if len(cmds) != 2 {
		t.Fatalf("want 2 commands, have %+v", cmds)
	}
	if c := cmds[0]; c.Line != 1 || c.End != 3 || !c.Terminated {
		t.Errorf("first: %+v", c)
	}
	if c := cmds[1]; c.Line != 4 || c.End != 5 || c.Terminated {
		t.Errorf("second (open at the end of input): %+v", c)
	}
	// A half-streamed block is open until its blank line or >>>.
	b := x.Extract(text("@relay:Bob <<<", "a"))
	if len(b) != 1 || b[0].Terminated || !b[0].Block {
		t.Errorf("open block: %+v", b)
	}
}

func TestCaps(t *testing.T) {
	t.Run("1 MB line", func(t *testing.T) {
		line := "@relay:Bob " + strings.Repeat("word ", 200_000)
		cmds := New(Options{}).Extract(text(line))
		if len(cmds) != 1 || !cmds[0].Truncated || len(cmds[0].Body) > MaxBodyBytes {
			t.Fatalf("want one truncated body of at most %d bytes, have %d commands", MaxBodyBytes, len(cmds))
		}
	})
	t.Run("1 MB of spaces before @", func(t *testing.T) {
		if cmds := New(Options{}).Extract(text(strings.Repeat(" ", 1<<20) + "@relay:Bob hi")); len(cmds) != 0 {
			t.Fatalf("a command past %d bytes of indent fired: %+v", maxPrefix, cmds)
		}
	})
	t.Run("lines", func(t *testing.T) {
		lines := []string{"@relay:Bob start"}
		for range MaxBodyLines + 50 {
			lines = append(lines, "more")
		}
		lines = append(lines, "", "@relay:Carol next")
		cmds := New(Options{}).Extract(text(lines...))
		if len(cmds) != 2 || !cmds[0].Truncated || strings.Count(cmds[0].Body, "more") != MaxBodyLines-1 {
			t.Fatalf("want a truncated body of %d lines then Carol, have %+v", MaxBodyLines, cmds)
		}
	})
	t.Run("block lines", func(t *testing.T) {
		lines := []string{"@relay:Bob <<<"}
		for range MaxBodyLines * 2 {
			lines = append(lines, "x")
		}
		cmds := New(Options{}).Extract(text(lines...))
		if len(cmds) != 1 || !cmds[0].Truncated || !cmds[0].Terminated {
			t.Fatalf("want a truncated, terminated block, have %+v", cmds)
		}
	})
	t.Run("multibyte cut at a rune boundary", func(t *testing.T) {
		cmds := New(Options{}).Extract(text("@relay:Bob " + strings.Repeat("é", MaxBodyBytes)))
		if len(cmds) != 1 || !cmds[0].Truncated || !strings.HasSuffix(cmds[0].Body, "é") {
			t.Fatalf("bad cut: %+v", cmds)
		}
	})
}

// TestUserNamespacePlaceholders checks that the placeholder guards, meant
// for message recipients, leave a user namespace alone: every one of these
// is a command the user configured and must fire.
func TestUserNamespacePlaceholders(t *testing.T) {
	tests := []struct {
		line string
		want got
	}{
		{"@deploy:staging [v1.2.3]", got{"deploy", "staging", "[v1.2.3]"}},
		{"@deploy:agent roll back", got{"deploy", "agent", "roll back"}},
		{"@notify:text build is green", got{"notify", "text", "build is green"}},
		{"@ticket:message <urgent>", got{"ticket", "message", "<urgent>"}},
		{"@deploy:<env> now", got{"deploy", "<env>", "now"}},
		{"@notify:done", got{"notify", "done", ""}},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			have := extract(t, Markdown, text(tc.line), "deploy", "notify", "ticket")
			if !equalGot(have, []got{tc.want}) {
				t.Errorf("have %q, want %q", have, tc.want)
			}
		})
	}
}
