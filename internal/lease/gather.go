package lease

import (
	"context"
	"sync"
	"time"
)

// A gathering is a set of handlers run together on one turn (the router's
// events of a turn that arrived together). The first of them to update the
// lease waits, briefly, for the others to queue their updates behind it,
// so that one compare-and-set carries them all instead of the first going
// alone and the rest after it.
type gathering struct {
	mu sync.Mutex
	// pending counts the members that have neither queued an update nor
	// finished; all is closed when it reaches zero.
	pending int
	all     chan struct{}
}

// gatherWait bounds the first update's wait for the others: a member that
// is slow to get to its update (a schema to check, a tool to look up) is
// left to the next compare-and-set.
const gatherWait = time.Millisecond

// member is one handler of a gathering.
type member struct {
	g    *gathering
	once sync.Once
}

type memberKey struct{}

// Gather prepares n handlers that run together: each runs with the context
// Join gives it.
func Gather(n int) *Gathering {
	return &Gathering{g: &gathering{pending: n, all: make(chan struct{})}}
}

// Gathering is the handle of handlers run together.
type Gathering struct{ g *gathering }

// Join returns the context one member runs with, and the function it calls
// when it is done (whether it updated the lease or not).
func (gg *Gathering) Join(ctx context.Context) (context.Context, func()) {
	m := &member{g: gg.g}
	return context.WithValue(ctx, memberKey{}, m), m.settled
}

// settled says the member will queue no first update any more.
func (m *member) settled() {
	m.once.Do(func() {
		g := m.g
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.pending--; g.pending == 0 {
			close(g.all)
		}
	})
}

// memberOf is the gathering member ctx runs as, or nil.
func memberOf(ctx context.Context) *member {
	m, _ := ctx.Value(memberKey{}).(*member)
	return m
}

// waitOthers waits until every other member has queued or finished, or
// gatherWait has passed.
func (m *member) waitOthers() {
	t := time.NewTimer(gatherWait)
	defer t.Stop()
	select {
	case <-m.g.all:
	case <-t.C:
	}
}
