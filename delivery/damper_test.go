package delivery

import (
	"strings"
	"testing"
	"time"
)

func TestDamperPairWindow(t *testing.T) {
	d := NewDamper(DamperOptions{PairMax: 3, PairWindow: time.Minute, AgentMax: 100})
	now := time.Unix(0, 0)
	for i := 0; i < 3; i++ {
		if ok, why := d.Allow(now.Add(time.Duration(i)*time.Second), "Alice", "Bob", 0); !ok {
			t.Fatalf("message %d held: %s", i, why)
		}
	}
	ok, why := d.Allow(now.Add(10*time.Second), "Alice", "Bob", 0)
	if ok || !strings.Contains(why, "Alice sent Bob 3 messages") {
		t.Fatalf("4th message: %v %q", ok, why)
	}
	if ok, _ := d.Allow(now.Add(10*time.Second), "Alice", "Carol", 0); !ok {
		t.Fatal("another pair was held")
	}
	if ok, why := d.Allow(now.Add(61*time.Second), "Alice", "Bob", 0); !ok {
		t.Fatalf("held after the window moved on: %s", why)
	}
}

func TestDamperAgentWindow(t *testing.T) {
	d := NewDamper(DamperOptions{AgentMax: 2, PairMax: 100})
	now := time.Unix(0, 0)
	d.Allow(now, "Alice", "Bob", 0)
	d.Allow(now, "Alice", "Carol", 0)
	if ok, why := d.Allow(now, "Alice", "Dave", 0); ok || !strings.Contains(why, "Alice sent 2 messages") {
		t.Fatalf("got %v %q", ok, why)
	}
}

func TestDamperHops(t *testing.T) {
	d := NewDamper(DamperOptions{MaxHops: 4})
	if ok, _ := d.Allow(time.Now(), "Alice", "Bob", 4); !ok {
		t.Fatal("hop 4 held")
	}
	if ok, why := d.Allow(time.Now(), "Alice", "Bob", 5); ok || !strings.Contains(why, "limit 4") {
		t.Fatalf("hop 5: %v %q", ok, why)
	}
}
