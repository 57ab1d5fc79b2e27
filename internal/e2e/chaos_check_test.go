package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
)

// chaosKey names one numbered message of the chaos soak: the seq-th
// message its sender sent (to any agent).
type chaosKey struct {
	from, to string
	seq      int
}

func (k chaosKey) String() string { return fmt.Sprintf("%s→%s#%d", k.from, k.to, k.seq) }

// chaosBody is the text of a numbered message; chaosBodyRE reads it back.
func chaosBody(k chaosKey) string {
	return fmt.Sprintf("chaos seq=%d from=%s to=%s end", k.seq, k.from, k.to)
}

var chaosBodyRE = regexp.MustCompile(`chaos seq=(\d+) from=(\w+) to=(\w+) end`)

// chaosSend is one `relay send` of the driver and what it answered.
type chaosSend struct {
	key chaosKey
	id  string        // the envelope's id, when the send succeeded
	err string        // why the send failed (then the message may or may not be stored)
	at  time.Duration // when the send began, since the soak began
}

// chaosArrivals returns the chaos messages a wrapped shell read, in the
// order it read them, from its file of lines (one line a line read). It is
// the one place that knows how relay types a message into a shell: a line
// counts for the body it carries ("chaos seq=N from=X to=Y end"); a line
// without one counts for each of its words that is a chaos message's id
// in the log (byID), so that a form that names the message by its id alone
// is read as well.
func chaosArrivals(file string, byID map[string]chaosKey) ([]chaosKey, error) {
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []chaosKey
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if ms := chaosBodyRE.FindAllStringSubmatch(line, -1); len(ms) > 0 {
			for _, m := range ms {
				n, _ := strconv.Atoi(m[1])
				out = append(out, chaosKey{from: m[2], to: m[3], seq: n})
			}
			continue
		}
		words := strings.FieldsFunc(line, func(r rune) bool {
			return !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		})
		for _, w := range words {
			if k, ok := byID[w]; ok {
				out = append(out, k)
			}
		}
	}
	return out, sc.Err()
}

// chaosLog reads `relay log --json` output: the chaos messages the hub
// stored, by id.
func chaosLog(out string) (map[string]bus.Entry, error) {
	byID := map[string]bus.Entry{}
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var e bus.Entry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			return nil, fmt.Errorf("relay log --json: %w: %.200s", err, l)
		}
		if chaosBodyRE.MatchString(e.Body) {
			byID[e.ID] = e
		}
	}
	return byID, nil
}

// keyOf returns the chaos message an entry of the log carries.
func keyOf(e bus.Entry) (chaosKey, bool) {
	m := chaosBodyRE.FindStringSubmatch(e.Body)
	if m == nil {
		return chaosKey{}, false
	}
	n, _ := strconv.Atoi(m[1])
	return chaosKey{from: m[2], to: m[3], seq: n}, true
}

// chaosVerdict is what the final check found: each a list of problems
// (empty when the soak kept its promises) and notes that are no failure.
type chaosVerdict struct {
	missing, twice, disorder, lies, phantoms, unlogged []string
	// stalls are what the end of the soak waited for in vain (an agent
	// that never read its sentinel, messages pending for good).
	stalls []string
	// unproven says that no message was seen at all (the seen check
	// proved nothing).
	unproven []string
	notes    []string
}

func (v chaosVerdict) failed() bool {
	return len(v.missing)+len(v.twice)+len(v.disorder)+len(v.lies)+len(v.phantoms)+len(v.unlogged)+len(v.stalls)+len(v.unproven) > 0
}

// String is the compact diagnosis printed when the soak fails.
func (v chaosVerdict) String() string {
	var b strings.Builder
	for _, s := range []struct {
		what  string
		items []string
	}{
		{"accepted by relay send, never read by the agent", v.missing},
		{"read more than once", v.twice},
		{"read out of order (per sender and target)", v.disorder},
		{"receipt says so, but the agent never read it", v.lies},
		{"read, but never sent", v.phantoms},
		{"accepted by relay send, not in relay log", v.unlogged},
		{"waited for in vain at the end", v.stalls},
		{"no seen receipt at all", v.unproven},
		{"notes (no failure)", v.notes},
	} {
		if len(s.items) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s (%d):\n", s.what, len(s.items))
		for i, it := range s.items {
			if i == 40 {
				fmt.Fprintf(&b, "  … and %d more\n", len(s.items)-i)
				break
			}
			fmt.Fprintf(&b, "  %s\n", it)
		}
	}
	return b.String()
}

// judgeChaos checks the promises of the chaos soak: every message whose
// relay send succeeded was read exactly once by its target, the messages
// of one sender to one target in the order they were sent; a message whose
// send failed was read at most once; nothing was read that was not sent;
// every "delivered", "seen" or "answered" receipt in the log is for a message its
// target read, and no "failed" one is; every "seen" or "answered" stage
// ever said (not only the latest status) is for a message its target read,
// and there is at least one when messages were read. arrivals holds what each agent read,
// in order; logged the chaos messages of relay log --json, by id.
func judgeChaos(sent []chaosSend, arrivals map[string][]chaosKey, logged map[string]bus.Entry) chaosVerdict {
	var v chaosVerdict
	count := map[chaosKey]int{}
	for _, seq := range arrivals {
		for _, k := range seq {
			count[k]++
		}
	}
	bySend := map[chaosKey]chaosSend{}
	loggedKeys := map[chaosKey]string{}
	for id, e := range logged {
		if k, ok := keyOf(e); ok {
			loggedKeys[k] = id
		}
	}
	failedButRead := 0
	for _, s := range sent {
		bySend[s.key] = s
		n := count[s.key]
		switch {
		case s.err == "" && n == 0:
			v.missing = append(v.missing, fmt.Sprintf("%s id %s sent at %v, receipt %s", s.key, s.id, s.at.Round(time.Millisecond), receiptOf(logged[s.id], s.key.to)))
		case n > 1:
			v.twice = append(v.twice, fmt.Sprintf("%s id %s ×%d", s.key, s.id, n))
		case s.err != "" && n == 1:
			failedButRead++
		}
		if _, ok := logged[s.id]; s.err == "" && !ok {
			v.unlogged = append(v.unlogged, fmt.Sprintf("%s id %s (the log has id %q for its body)", s.key, s.id, loggedKeys[s.key]))
		}
	}
	if failedButRead > 0 {
		v.notes = append(v.notes, fmt.Sprintf("%d messages whose relay send failed were read all the same (once)", failedButRead))
	}
	for to, seq := range arrivals {
		last := map[string]int{} // highest seq read so far, by sender
		seen := map[chaosKey]bool{}
		for i, k := range seq {
			if _, ok := bySend[k]; !ok || k.to != to {
				v.phantoms = append(v.phantoms, fmt.Sprintf("%s read by %s", k, to))
				continue
			}
			if seen[k] {
				continue // counted in twice
			}
			seen[k] = true
			if k.seq < last[k.from] {
				v.disorder = append(v.disorder, fmt.Sprintf("%s read by %s after #%d (line %d of what it read)", k, to, last[k.from], i+1))
			}
			last[k.from] = max(last[k.from], k.seq)
		}
	}
	ids := make([]string, 0, len(logged))
	for id := range logged {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	seen, read := 0, 0
	for _, id := range ids {
		e := logged[id]
		k, _ := keyOf(e)
		if count[k] > 0 {
			read++
		}
		switch st := e.Status[k.to]; {
		case bus.Reached(st, bus.StatusDelivered) && count[k] == 0:
			v.lies = append(v.lies, fmt.Sprintf("%s id %s: %s", k, id, receiptOf(e, k.to)))
		case st == bus.StatusFailed && count[k] > 0:
			v.lies = append(v.lies, fmt.Sprintf("%s id %s read ×%d: %s", k, id, count[k], receiptOf(e, k.to)))
		}
		// Every seen (or answered) stage ever said, not only the latest
		// status (a later failed one replaces it): each is a proof that
		// the agent got the message, so its agent must have read it.
		said := false
		for _, st := range e.Stages {
			if st.Agent != k.to || !bus.Reached(st.Stage, bus.StatusSeen) {
				continue
			}
			said = true
			if count[k] == 0 && (st.Stage != e.Status[k.to] || !bus.Reached(e.Status[k.to], bus.StatusDelivered)) {
				v.lies = append(v.lies, fmt.Sprintf("%s id %s: %s (%s) at %s, never read", k, id, st.Stage, st.Reason, st.At.Format(time.TimeOnly)))
			}
		}
		if said {
			seen++
		}
	}
	switch {
	case read > 0 && seen == 0:
		v.unproven = append(v.unproven, fmt.Sprintf("%d messages read, none with a seen receipt: the check that each seen is real proved nothing", read))
	case seen > 0:
		v.notes = append(v.notes, fmt.Sprintf("%d of %d messages read have a seen receipt, each read by its agent", seen, read))
	}
	for _, l := range [][]string{v.missing, v.twice, v.disorder, v.lies, v.phantoms, v.unlogged} {
		slices.SortFunc(l, naturalCompare)
	}
	return v
}

// receiptOf is the status of e for to, and its reason, as one word or two.
func receiptOf(e bus.Entry, to string) string {
	st := string(e.Status[to])
	if st == "" {
		st = "none"
	}
	if r := e.Reasons[to]; r != "" {
		st += " (" + r + ")"
	}
	return st
}

// mustKey returns the chaos message an entry carries (tests).
func mustKey(e bus.Entry) chaosKey {
	k, ok := keyOf(e)
	if !ok {
		panic("not a chaos message: " + e.Body)
	}
	return k
}

// naturalCompare orders "A→B#9" before "A→B#10".
func naturalCompare(a, b string) int {
	pa, na := splitNum(a)
	pb, nb := splitNum(b)
	if c := strings.Compare(pa, pb); c != 0 {
		return c
	}
	return na - nb
}

func splitNum(s string) (string, int) {
	i := strings.Index(s, "#")
	if i < 0 {
		return s, 0
	}
	j := i + 1
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	n, _ := strconv.Atoi(s[i+1 : j])
	return s[:i], n
}

// TestChaosVerdict: the soak's final check fails on a lost message, one
// read twice, one read out of order, a "delivered" receipt for a message
// never read and a message read that nobody sent; it passes a run that
// kept its promises, and a failed send that was stored and read once.
func TestChaosVerdict(t *testing.T) {
	k := func(from, to string, seq int) chaosKey { return chaosKey{from: from, to: to, seq: seq} }
	sends := []chaosSend{
		{key: k("A", "B", 1), id: "i1"},
		{key: k("A", "B", 2), id: "i2"},
		{key: k("A", "C", 3), id: "i3"},
		{key: k("B", "A", 1), id: "i4"},
		{key: k("B", "A", 2), err: "hub unreachable"},
	}
	entry := func(id string, key chaosKey, st bus.Status, stages ...bus.Status) bus.Entry {
		e := bus.Entry{Envelope: bus.Envelope{ID: id, From: key.from, To: key.to, Body: chaosBody(key)},
			Status: map[string]bus.Status{key.to: st}}
		for _, s := range stages {
			e.Stages = append(e.Stages, bus.Stage{Agent: key.to, Stage: s, Reason: "read by the shell"})
		}
		return e
	}
	log := map[string]bus.Entry{}
	for _, s := range sends[:4] {
		log[s.id] = entry(s.id, s.key, bus.StatusSeen, bus.StatusDelivered, bus.StatusSeen)
	}
	with := func(id string, e bus.Entry) map[string]bus.Entry {
		l := maps.Clone(log)
		l[id] = e
		return l
	}
	unseen := map[string]bus.Entry{}
	for id, e := range log {
		unseen[id] = entry(id, mustKey(e), bus.StatusDelivered, bus.StatusDelivered)
	}
	good := map[string][]chaosKey{
		"B": {k("A", "B", 1), k("A", "B", 2)},
		"C": {k("A", "C", 3)},
		"A": {k("B", "A", 1)},
	}
	for _, tc := range []struct {
		name     string
		arrivals map[string][]chaosKey
		log      map[string]bus.Entry
		want     string // a problem list that must not be empty ("" for none)
	}{
		{"kept", good, log, ""},
		{"failed send read once", map[string][]chaosKey{"B": good["B"], "C": good["C"], "A": {k("B", "A", 1), k("B", "A", 2)}}, log, ""},
		{"lost", map[string][]chaosKey{"B": {k("A", "B", 1)}, "C": good["C"], "A": good["A"]},
			map[string]bus.Entry{"i1": log["i1"], "i3": log["i3"], "i4": log["i4"], "i2": entry("i2", k("A", "B", 2), bus.StatusQueued)}, "missing"},
		{"read twice", map[string][]chaosKey{"B": {k("A", "B", 1), k("A", "B", 2), k("A", "B", 1)}, "C": good["C"], "A": good["A"]}, log, "twice"},
		{"failed send read twice", map[string][]chaosKey{"B": good["B"], "C": good["C"], "A": {k("B", "A", 1), k("B", "A", 2), k("B", "A", 2)}}, log, "twice"},
		{"out of order", map[string][]chaosKey{"B": {k("A", "B", 2), k("A", "B", 1)}, "C": good["C"], "A": good["A"]}, log, "disorder"},
		{"delivered but not read", map[string][]chaosKey{"B": {k("A", "B", 1)}, "C": good["C"], "A": good["A"]}, log, "lies"},
		{"never sent", map[string][]chaosKey{"B": append(slices.Clone(good["B"]), k("C", "B", 7)), "C": good["C"], "A": good["A"]}, log, "phantoms"},
		{"seen, then failed, never read", map[string][]chaosKey{"B": {k("A", "B", 1)}, "C": good["C"], "A": good["A"]},
			with("i2", entry("i2", k("A", "B", 2), bus.StatusFailed, bus.StatusDelivered, bus.StatusSeen, bus.StatusFailed)), "lies"},
		{"no seen receipt at all", good, unseen, "unproven"},
		{"not in the log", good, map[string]bus.Entry{"i1": log["i1"], "i2": log["i2"], "i4": log["i4"]}, "unlogged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := judgeChaos(sends, tc.arrivals, tc.log)
			lists := map[string][]string{"missing": v.missing, "twice": v.twice, "disorder": v.disorder,
				"lies": v.lies, "phantoms": v.phantoms, "unlogged": v.unlogged, "unproven": v.unproven}
			if tc.want == "" {
				if v.failed() {
					t.Fatalf("a run that kept its promises failed:\n%s", v)
				}
				return
			}
			if len(lists[tc.want]) == 0 || !v.failed() {
				t.Fatalf("want %s reported, got:\n%s", tc.want, v)
			}
		})
	}
}

// TestChaosArrivals: a shell's lines are read for the bodies they carry,
// several on a line when messages were typed together, and for message ids
// alone when a line names a message without its body.
func TestChaosArrivals(t *testing.T) {
	k1, k2, k3 := chaosKey{"A", "B", 1}, chaosKey{"A", "B", 2}, chaosKey{"C", "B", 5}
	file := t.TempDir() + "/got.txt"
	lines := "# [relay] Message from A (id ID1). To answer, write a line starting with @relay:A ⏎ " + chaosBody(k1) + "\n" +
		"# [relay] notice: something else\n" +
		"# [relay] Message from A (id ID2) ⏎ " + chaosBody(k2) + "  # [relay] Message from C (id ID3) ⏎ " + chaosBody(k3) + "\n" +
		"# [relay] Message from A: read it with relay log --id ID1.\n"
	if err := os.WriteFile(file, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := chaosArrivals(file, map[string]chaosKey{"ID1": k1, "ID2": k2, "ID3": k3})
	if err != nil {
		t.Fatal(err)
	}
	if want := []chaosKey{k1, k2, k3, k1}; !slices.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
}
