package agents

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/patterns"
)

// fakeFile is a ReplyFile whose reads are scripted.
type fakeFile struct {
	replies [][]string // one read each
	idle    []bool     // what each read was told
}

func (f *fakeFile) Read(idle bool) ([]string, []string, error) {
	f.idle = append(f.idle, idle)
	if len(f.replies) == 0 {
		return nil, nil, nil
	}
	r := f.replies[0]
	f.replies = f.replies[1:]
	return r, []string{"prompt"}, nil
}

// followerRig is a replyFollower with a fake clock and what it fired.
type followerRig struct {
	f       *Follower
	now     time.Time
	file    ReplyFile
	findErr error
	replies []string
	prompts []string
	flushed []patterns.Command
}

func newFollowerRig() *followerRig {
	r := &followerRig{now: time.Unix(1000, 0), findErr: fs.ErrNotExist}
	r.f = NewFollower("the test's file", func(int) (ReplyFile, error) {
		if r.file != nil {
			return r.file, nil
		}
		return nil, r.findErr
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.f.now = func() time.Time { return r.now }
	r.f.pid = func() int { return 0 }
	r.f.fire = func(replies, prompts []string) {
		r.replies = append(r.replies, replies...)
		r.prompts = append(r.prompts, prompts...)
	}
	r.f.flush = func(c []patterns.Command) { r.flushed = append(r.flushed, c...) }
	return r
}

func cmd(body string) patterns.Command {
	return patterns.Command{NS: "relay", Target: "Bob", Body: body}
}

func TestReplyFollower(t *testing.T) {
	t.Run("found: screen commands are copies, the file fires", func(t *testing.T) {
		r := newFollowerRig()
		if !r.f.Screen(cmd("seen before the file")) {
			t.Fatal("a pending follower did not hold a screen command")
		}
		ff := &fakeFile{replies: [][]string{{"reply one"}, {"reply two"}}}
		r.file = ff
		if !r.f.poll(false) || !r.f.Active() {
			t.Fatal("the follower is not on once its file is found")
		}
		if !r.f.Screen(cmd("a copy")) {
			t.Error("an active follower let a screen command through")
		}
		r.f.poll(true)
		if want := []string{"reply one", "reply two"}; !slices.Equal(r.replies, want) {
			t.Errorf("replies fired %q, want %q", r.replies, want)
		}
		if len(r.prompts) != 2 {
			t.Errorf("prompts %q, want one per read", r.prompts)
		}
		if len(r.flushed) != 0 {
			t.Errorf("screen commands fired as well: %v", r.flushed)
		}
		if !slices.Equal(ff.idle, []bool{false, true}) {
			t.Errorf("reads were told idle %v, want [false true]", ff.idle)
		}
	})
	t.Run("not found: held commands fire once, in order, after the wait", func(t *testing.T) {
		r := newFollowerRig()
		r.f.Screen(cmd("one"))
		r.now = r.now.Add(time.Second)
		r.f.Screen(cmd("two"))
		if !r.f.poll(true) || len(r.flushed) != 0 {
			t.Fatalf("gave up before the wait: flushed %v", r.flushed)
		}
		r.now = r.now.Add(followDue)
		if r.f.poll(true) {
			t.Error("poll goes on after giving up")
		}
		if want := []patterns.Command{cmd("one"), cmd("two")}; !slices.Equal(r.flushed, want) {
			t.Errorf("flushed %v, want %v", r.flushed, want)
		}
		if r.f.Screen(cmd("three")) {
			t.Error("after giving up, a screen command was held")
		}
		r.file = &fakeFile{replies: [][]string{{"late"}}}
		r.f.poll(true)
		if r.f.Active() || len(r.replies) != 0 {
			t.Error("a file found after giving up was read: commands would fire twice")
		}
	})
	t.Run("nothing held: no hurry", func(t *testing.T) {
		r := newFollowerRig()
		r.now = r.now.Add(time.Hour)
		if !r.f.poll(true) {
			t.Error("gave up with no command waiting")
		}
	})
	t.Run("a hard error gives up at once", func(t *testing.T) {
		r := newFollowerRig()
		r.findErr = errors.New("bad session id")
		r.f.Screen(cmd("one"))
		if r.f.poll(false) {
			t.Error("poll goes on after a hard error")
		}
		if len(r.flushed) != 1 {
			t.Errorf("flushed %v, want the held command", r.flushed)
		}
	})
	t.Run("a not-found that wraps ErrNotExist keeps looking", func(t *testing.T) {
		r := newFollowerRig()
		r.findErr = fmt.Errorf("%w (two sessions)", fs.ErrNotExist)
		if !r.f.poll(false) {
			t.Error("gave up on a wrapped fs.ErrNotExist")
		}
	})
}
