package executor

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestEvery: fn runs every d, not at once, and not after stop returns.
func TestEvery(t *testing.T) {
	var n atomic.Int32
	stop := every(10*time.Millisecond, func() { n.Add(1) })
	if n.Load() != 0 {
		t.Fatal("ran at once")
	}
	deadline := time.Now().Add(5 * time.Second)
	for n.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	after := n.Load()
	if after < 3 {
		t.Fatalf("ran %d times in 5 s", after)
	}
	time.Sleep(50 * time.Millisecond)
	if n.Load() != after {
		t.Errorf("ran %d times after stop", n.Load()-after)
	}
}
