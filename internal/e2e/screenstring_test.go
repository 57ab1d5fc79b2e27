package e2e

import (
	"testing"
	"time"
)

// TestLoneDCSDoesNotBlind: an agent prints a lone ESC P (a DCS that never
// ends, as `head -c 30M /dev/urandom` leaves behind) and then, after a
// pause as at a shell prompt, an @relay: line: relay still reads its screen
// and Bob gets the message. The line is written again every 1.5 s until
// Bob has one, so a slow machine cannot merge the pause away.
func TestLoneDCSDoesNotBlind(t *testing.T) {
	tm := newTeam(t)
	bob := tm.agent("Bob", script()...)
	tm.waitAgents("Bob")
	alice := `printf 'random bytes\033P'; i=0
while [ $i -lt 40 ]; do sleep 1.5; i=$((i+1)); echo "@relay:Bob after-dcs $i"; echo; done
exec cat`
	tm.agent("Alice", "sh", "-c", alice)
	bob.WaitOutput("after-dcs", 60*time.Second)
}
