//go:build !linux

package alarm

import (
	"errors"
	"time"

	"github.com/relayhq/relay/internal/mailbox"
)

// timerFD exists on Linux only; elsewhere the alarm is a Go timer.
type timerFD struct{}

func openTimerFD(mailbox.Signal) (*timerFD, error) {
	return nil, errors.New("no timerfd on this system")
}

func (*timerFD) set(time.Duration) {}
func (*timerFD) close()            {}
