package memory

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxReplyBytes caps the text typed back into an agent for one @memory:
// command: room for about ten memories, little enough not to flood the
// agent's context or its input box. Whatever does not fit is counted in a
// last line ("3 more left out"), never dropped silently.
const MaxReplyBytes = 2000

// MaxShownText caps how much of one memory's text a reply shows; a longer
// memory shows its best-matching snippet, or its start.
const MaxShownText = 300

// Age renders how long ago d was, compactly: now, 5m, 3h, 3d, 2y.
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "now"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	case d < 365*24*time.Hour:
		return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	}
	return fmt.Sprintf("%dy", int(d/(365*24*time.Hour)))
}

// oneLine folds white space (new lines included) to single spaces and cuts
// s to at most n bytes on a rune boundary, marking the cut with "…".
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " ") + "…"
}

// FormatLine renders one memory on one line, as the replies and the CLI
// show it: "- [id] text (3d, Alice) #tag", the text cut at MaxShownText.
func FormatLine(m Memory, now time.Time) string { return line(m, m.Text, now) }

// line renders one memory: "- [id] text (3d, Alice) #tag".
func line(m Memory, text string, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- [%s] %s (%s", m.ID, oneLine(text, MaxShownText), Age(now.Sub(m.Updated)))
	if m.Author != "" {
		b.WriteString(", " + m.Author)
	}
	if m.Scope != ScopeWorkspace && m.Scope != "" {
		b.WriteString(", " + string(m.Scope))
	}
	b.WriteString(")")
	for _, t := range m.Tags {
		b.WriteString(" #" + t)
	}
	return b.String()
}

// capped joins head and lines, stopping before MaxReplyBytes and saying
// how many lines were left out.
func capped(head string, lines []string, hint string) string {
	var b strings.Builder
	b.WriteString(head)
	for i, l := range lines {
		more := fmt.Sprintf("\n(%d more left out; %s)", len(lines)-i, hint)
		if b.Len()+1+len(l)+len(more) > MaxReplyBytes && i > 0 {
			b.WriteString(more)
			break
		}
		b.WriteString("\n" + l)
	}
	return b.String()
}

// FormatResults renders search results for an agent, newest-relevant
// first as Search ranked them, capped at MaxReplyBytes.
func FormatResults(query string, rs []Result, now time.Time) string {
	q := oneLine(query, 80)
	if len(rs) == 0 {
		return fmt.Sprintf("memory search %q: nothing found", q)
	}
	lines := make([]string, len(rs))
	for i, r := range rs {
		text := r.Text
		if len(strings.Join(strings.Fields(text), " ")) > MaxShownText && r.Snippet != "" {
			text = r.Snippet
		}
		lines[i] = line(r.Memory, text, now)
	}
	return capped(fmt.Sprintf("memory search %q: %d %s", q, len(rs), plural(len(rs), "result")), lines,
		"search with more words to narrow")
}

// FormatList renders memories newest first for an agent, capped at
// MaxReplyBytes.
func FormatList(ms []Memory, now time.Time) string {
	if len(ms) == 0 {
		return "memory list: no memories yet (save one with @memory:save TEXT)"
	}
	lines := make([]string, len(ms))
	for i, m := range ms {
		lines[i] = line(m, m.Text, now)
	}
	return capped(fmt.Sprintf("memory list: %d newest", len(ms)), lines, "search to find the others")
}

// FormatSaved answers a save: created is false when the same text was
// already saved and was only marked recent again.
func FormatSaved(m Memory, created bool) string {
	if created {
		return fmt.Sprintf("memory saved as [%s]", m.ID)
	}
	return fmt.Sprintf("memory already saved as [%s]; marked recent", m.ID)
}

// FormatForgotten answers a forget with what was removed.
func FormatForgotten(m Memory) string {
	return fmt.Sprintf("memory forgot [%s] %s", m.ID, oneLine(m.Text, MaxShownText))
}

// FormatMemory shows one memory in full (up to MaxReplyBytes).
func FormatMemory(m Memory, now time.Time) string {
	return oneLine(line(m, "", now), MaxReplyBytes) + "\n" + oneLine(m.Text, MaxReplyBytes)
}

// FormatError is the short notice typed back when a verb fails.
func FormatError(verb string, err error) string {
	return oneLine(fmt.Sprintf("memory %s failed: %v", verb, err), 400)
}

// FormatRelevant renders memories given to an agent with its primer at the
// start of a session; "" when there are none.
func FormatRelevant(ms []Memory, now time.Time) string {
	if len(ms) == 0 {
		return ""
	}
	lines := make([]string, len(ms))
	for i, m := range ms {
		lines[i] = line(m, m.Text, now)
	}
	return capped("Memories your team saved for this project (find more with @memory:search WORDS):", lines,
		"search to find them")
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
