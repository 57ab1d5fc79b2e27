package wrapper

import (
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestExitedUnreaped: a child that exited is seen to have exited before
// anyone reaped it, and asking does not reap it: its reaper (waitLoop)
// still collects its status. A child that runs is not taken for gone.
func TestExitedUnreaped(t *testing.T) {
	start := func(script string) int {
		t.Helper()
		pid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", script}, &syscall.ProcAttr{})
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	running := start("sleep 30")
	exiting := start("exit 3")
	t.Cleanup(func() {
		_ = unix.Kill(running, unix.SIGKILL)
		var ws unix.WaitStatus
		_, _ = unix.Wait4(running, &ws, 0, nil)
	})

	deadline := time.Now().Add(10 * time.Second)
	for !exitedUnreaped(exiting) {
		if time.Now().After(deadline) {
			t.Fatal("a child that exited was never seen to have exited")
		}
		time.Sleep(5 * time.Millisecond)
	}
	var ws unix.WaitStatus
	pid, err := unix.Wait4(exiting, &ws, unix.WNOHANG, nil)
	if err != nil || pid != exiting || !ws.Exited() || ws.ExitStatus() != 3 {
		t.Fatalf("reaping after the question: pid %d, status %v, err %v; want %d exited 3", pid, ws, err, exiting)
	}
	if !exitedUnreaped(exiting) {
		t.Error("a child already reaped is not taken for gone")
	}
	if exitedUnreaped(running) {
		t.Error("a child that runs is taken for gone")
	}
}
