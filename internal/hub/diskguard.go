//go:build !lean

package hub

import (
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"golang.org/x/sys/unix"
)

// diskGuardEvery is how often the hub looks at the free space of its disk.
const diskGuardEvery = 500 * time.Millisecond

// storeLimit is what JetStream may store: what it holds plus three
// quarters of the disk's free space, at most max. Keeping a quarter free
// keeps the store from ever meeting a full disk: a write that fails for
// want of space makes a NATS file store refuse every later write until the
// server restarts, while a send refused by this limit fails cleanly
// ("insufficient resources") and works again once space is freed.
func storeLimit(used, free, max int64) int64 {
	return min(max, used+free/4*3)
}

// guardDisk keeps the account's JetStream store limit at storeLimit as the
// disk's free space changes, until done is closed. Unlike the server's own
// limit, which it sizes once from the free space at start and cannot lower
// at run time, an account's limit can move both ways.
func guardDisk(srv *server.Server, dir string, max int64, done <-chan struct{}) {
	acc := srv.GlobalAccount()
	last := int64(-1)
	set := func() {
		var st unix.Statfs_t
		if unix.Statfs(dir, &st) != nil {
			return
		}
		free := int64(st.Bavail) * int64(st.Bsize)
		limit := storeLimit(int64(acc.JetStreamUsage().Store), free, max)
		if d := limit - last; last >= 0 && d < 64<<10 && d > -(64<<10) && limit != max {
			return // a small change: not worth a limits update
		}
		// Memory stays bounded by the server's own limit (Options.MaxMemory).
		err := acc.UpdateJetStreamLimits(map[string]server.JetStreamAccountLimits{"": {
			MaxMemory: -1, MaxStore: limit, MaxStreams: -1, MaxConsumers: -1, MaxAckPending: -1,
			MemoryMaxStreamBytes: -1, StoreMaxStreamBytes: -1,
		}})
		if err == nil {
			last = limit
		}
	}
	set()
	tick := time.NewTicker(diskGuardEvery)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			set()
		}
	}
}
