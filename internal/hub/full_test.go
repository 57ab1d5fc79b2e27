//go:build linux

package hub_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// smallDisk mounts a tmpfs of size bytes for the test, or skips the test
// when mounting is not allowed here.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("cannot mount a %s tmpfs here (%v): the full-disk test needs root and mount rights", size, err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes a file of n bytes, or as much as fits.
func fill(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for n > 0 {
		w, err := f.Write(chunk[:min(n, len(chunk))])
		n -= w
		if err != nil {
			return // the disk is full
		}
	}
}

// TestHubRecoversFromAFullDisk fills a 4 MiB disk that holds the hub's
// store, sends until the hub refuses, frees the space and checks that
// sends work again with the same hub, without a restart, and that what it
// stored before is still there.
func TestHubRecoversFromAFullDisk(t *testing.T) {
	disk := smallDisk(t, "4m")
	home := filepath.Join(disk, "home")
	filler := filepath.Join(disk, "filler")
	fill(t, filler, 3<<20) // someone else's files take most of the disk
	h := start(t, hub.Options{Home: home, Listen: "127.0.0.1:0"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := bus.Connect(ctx, bus.Options{URL: h.URL(), Token: h.Token(), Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	body := strings.Repeat("x", 8<<10)
	sent := 0
	var full error
	for i := 0; i < 2000; i++ {
		if _, err := c.Send(ctx, "bob", body); err != nil && !errors.Is(err, bus.ErrUnknownAgent) {
			full = err
			break
		}
		sent++
	}
	if full == nil {
		t.Fatalf("sent %d messages of 8 KiB to a 4 MiB disk and none failed", sent)
	}
	t.Logf("disk full after %d messages: %v", sent, full)
	if !errors.Is(full, bus.ErrHubFull) {
		t.Errorf("a send to a full hub failed with %v; want bus.ErrHubFull", full)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		_, err := c.Send(ctx, "bob", "after the disk was freed")
		if errors.Is(err, bus.ErrUnknownAgent) {
			err = nil
		}
		return err
	})
	n := 0
	if err := c.Log(ctx, bus.LogOptions{}, func(bus.Entry) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n < sent+1 {
		t.Errorf("log holds %d messages after the disk was freed, want the %d sent before and the one after", n, sent)
	}
}
