package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/relayhq/relay/bus"
)

// drain waits, once the chaos is over and the team whole, for every
// message a relay send accepted to be read (up to d); then for a sentinel
// sent to each agent after everything else (once read, any copy of an
// earlier message the hub delivered again has had its chance to be typed);
// then for no agent to have messages pending. What does not come in time
// is kept for the verdict, not failed at once: the verdict says which
// messages are missing.
func (cr *chaosRun) drain(d time.Duration) {
	began := time.Now()
	var last error
	for deadline := began.Add(d); ; {
		if last = cr.allRead(); last == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if last != nil {
		cr.stalls = append(cr.stalls, fmt.Sprintf("not all read %v after the chaos: %v", d, last))
	} else {
		cr.logf("every accepted message read %v after the chaos", time.Since(began).Round(100*time.Millisecond))
	}

	sentinels := map[string]string{} // agent → id
	for _, n := range cr.names {
		out, err := cr.relay(60*time.Second, "send", "--json", "--from", "chaosdriver", n, "chaos sentinel to="+n)
		if err != nil {
			cr.stalls = append(cr.stalls, fmt.Sprintf("relay send of the sentinel to %s: %v: %s", n, err, out))
			continue
		}
		sentinels[n] = idOf(out)
	}
	waitFor := func(what string, d time.Duration, check func() error) {
		var err error
		for deadline := time.Now().Add(d); ; {
			if err = check(); err == nil {
				return
			}
			if time.Now().After(deadline) {
				cr.stalls = append(cr.stalls, fmt.Sprintf("%s: still %v after %v", what, err, d))
				return
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	// Shorter waits when messages are missing already: the verdict will
	// fail in any case; these say whether the agent is deaf for good.
	wait := 60 * time.Second
	if last != nil {
		wait = 20 * time.Second
	}
	waitFor("the sentinels", wait, func() error {
		var late []string
		for n, id := range sentinels {
			b, _ := os.ReadFile(cr.gotFile(n))
			if !strings.Contains(string(b), "chaos sentinel to="+n) && (id == "" || !strings.Contains(string(b), id)) {
				late = append(late, n)
			}
		}
		if len(late) > 0 {
			sort.Strings(late)
			return fmt.Errorf("not read by %v", late)
		}
		return nil
	})
	waitFor("messages pending", wait, func() error {
		list, err := cr.agents()
		if err != nil {
			return err
		}
		var pending []string
		for _, p := range list {
			if p.Pending > 0 {
				pending = append(pending, fmt.Sprintf("%s (%s) %d", p.Name, p.State, p.Pending))
			}
		}
		if len(pending) > 0 {
			return fmt.Errorf("pending: %v", pending)
		}
		return nil
	})
}

// idOf is the id in relay send --json's output ("" if none).
func idOf(out string) string {
	if m := regexp.MustCompile(`"id":"([^"]+)"`).FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}

// allRead says which accepted messages no agent has read yet.
func (cr *chaosRun) allRead() error {
	arrivals, _, err := cr.read()
	if err != nil {
		return err
	}
	seen := map[chaosKey]bool{}
	for _, seq := range arrivals {
		for _, k := range seq {
			seen[k] = true
		}
	}
	var missing []string
	for _, s := range cr.sends() {
		if s.err == "" && !seen[s.key] {
			missing = append(missing, s.key.String())
		}
	}
	if len(missing) > 0 {
		slices.SortFunc(missing, naturalCompare)
		return fmt.Errorf("%d accepted messages not read, e.g. %v", len(missing), missing[:min(len(missing), 10)])
	}
	return nil
}

// read returns what each agent read and the chaos messages of the log.
func (cr *chaosRun) read() (map[string][]chaosKey, map[string]bus.Entry, error) {
	out, err := cr.relay(60*time.Second, "log", "--json")
	if err != nil {
		return nil, nil, fmt.Errorf("relay log --json: %w: %.300s", err, out)
	}
	logged, err := chaosLog(out)
	if err != nil {
		return nil, nil, err
	}
	byID := map[string]chaosKey{}
	for id, e := range logged {
		if k, ok := keyOf(e); ok {
			byID[id] = k
		}
	}
	arrivals := map[string][]chaosKey{}
	for _, n := range cr.names {
		if arrivals[n], err = chaosArrivals(cr.gotFile(n), byID); err != nil {
			return nil, nil, err
		}
	}
	return arrivals, logged, nil
}

func (cr *chaosRun) sends() []chaosSend {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	return slices.Clone(cr.sent)
}

// verdict judges the run (judgeChaos) and adds what drain waited for in
// vain.
func (cr *chaosRun) verdict() chaosVerdict {
	arrivals, logged, err := cr.read()
	if err != nil {
		return chaosVerdict{stalls: append(cr.stalls, err.Error())}
	}
	v := judgeChaos(cr.sends(), arrivals, logged)
	v.stalls = cr.stalls
	return v
}

func (cr *chaosRun) actionCounts() string {
	var parts []string
	total := 0
	for _, a := range chaosActions {
		parts = append(parts, fmt.Sprintf("%d× %s", cr.acts[a], a))
		total += cr.acts[a]
	}
	return fmt.Sprintf("%d actions (%s)", total, strings.Join(parts, ", "))
}

func (cr *chaosRun) sendCounts() string {
	sent := cr.sends()
	failed := 0
	for _, s := range sent {
		if s.err != "" {
			failed++
		}
	}
	return fmt.Sprintf("%d messages sent, %d of them refused or failed (sent while the hub was away)", len(sent), failed)
}

// diagnosis is what a failed soak prints beside its verdict: what the
// driver did when, the senders' errors, and from each wrapper's log (and
// the hub's) its warnings and errors and its last lines.
func (cr *chaosRun) diagnosis() string {
	var b strings.Builder
	fmt.Fprintf(&b, "chaos soak diagnosis: %s; %s; %d wraps refused as taken; reclaims took %v\n",
		cr.actionCounts(), cr.sendCounts(), cr.refused, roundAll(cr.reclaims))
	fmt.Fprintf(&b, "what the driver did:\n  %s\n", strings.Join(cr.journal, "\n  "))
	// The senders' errors, counted by their text with numbers (ports,
	// pids, times) left out.
	errs, example := map[string]int{}, map[string]string{}
	digits := regexp.MustCompile(`[0-9]+`)
	for _, s := range cr.sends() {
		if s.err != "" {
			k := digits.ReplaceAllString(firstLine(s.err), "N")
			errs[k]++
			example[k] = fmt.Sprintf("%s at %v: %s", s.key, s.at.Round(time.Millisecond), firstLine(s.err))
		}
	}
	if len(errs) > 0 {
		b.WriteString("relay send errors (the message may have been stored all the same):\n")
		for k, n := range errs {
			fmt.Fprintf(&b, "  %d× e.g. %s\n", n, example[k])
		}
	}
	logs, _ := filepath.Glob(filepath.Join(cr.hp.home, "logs", "*.log"))
	for _, f := range logs {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		var notable []string
		for _, l := range lines {
			if strings.Contains(l, "ERROR") || strings.Contains(l, "WARN") || strings.Contains(l, "inbox") {
				notable = append(notable, l)
			}
		}
		fmt.Fprintf(&b, "%s: %d lines; warnings, errors and inbox lines (last 25 of %d):\n  %s\n  last lines:\n  %s\n",
			filepath.Base(f), len(lines), len(notable), strings.Join(notable[max(0, len(notable)-25):], "\n  "),
			strings.Join(lines[max(0, len(lines)-8):], "\n  "))
	}
	if out, err := cr.relay(30*time.Second, "agents"); err == nil {
		fmt.Fprintf(&b, "relay agents:\n%s", out)
	}
	return b.String()
}

// logMsgRE reads the message of a log line (slog's text form).
var logMsgRE = regexp.MustCompile(`level=(\w+) msg=("(?:[^"\\]|\\.)*"|\S+)`)

// logEvents counts, in each wrapper's log, the lines about its inbox and
// the errors, by message: evidence of the paths the chaos took, whatever
// their wording.
func (cr *chaosRun) logEvents() string {
	var parts []string
	for _, n := range cr.names {
		data, _ := os.ReadFile(filepath.Join(cr.hp.home, "logs", "wrap-"+n+".log"))
		count := map[string]int{}
		for _, l := range strings.Split(string(data), "\n") {
			m := logMsgRE.FindStringSubmatch(l)
			if m != nil && (m[1] == "ERROR" || strings.Contains(m[2], "inbox")) {
				count[m[1]+" "+m[2]]++
			}
		}
		var c []string
		for k, v := range count {
			c = append(c, fmt.Sprintf("%d× %s", v, k))
		}
		sort.Strings(c)
		parts = append(parts, fmt.Sprintf("%s: %s", n, strings.Join(c, ", ")))
	}
	return strings.Join(parts, "; ")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(100 * time.Millisecond)
	}
	return out
}
