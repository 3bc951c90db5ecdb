package lease

import (
	"slices"
	"sync"

	"github.com/toolwire/toolwire/schemas"
)

// Standing is an update that waits for its moment: a parked call's claim.
// Every write this store makes to the turn's lease runs it too, after the
// write's own updates, and the first time it changes the lease its change
// goes in that same compare-and-set. So when a call of this process
// finishes, the done mark starts the call waiting behind it, with no
// notification, read or second write in between. Writes of other
// processes do not run it: the parked call still watches for those.
type Standing struct {
	key string
	fn  Mutator
	// mu is held while a write that ran fn is in flight, so that Withdraw
	// knows for sure whether the change landed.
	mu        sync.Mutex
	withdrawn bool
	fired     chan struct{}
	l         *schemas.Lease
	rev       uint64
}

// Stand registers fn as a standing update of the turn's lease. fn follows
// the Mutator rules; ErrNoChange (or any error) leaves it standing.
func (s *Store) Stand(tenant, turn string, fn Mutator) *Standing {
	st := &Standing{key: s.space.LeaseKey(tenant, turn), fn: fn, fired: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.standing == nil {
		s.standing = map[string][]*Standing{}
	}
	s.standing[st.key] = append(s.standing[st.key], st)
	return st
}

// Fired is closed once the standing update's change is written.
func (st *Standing) Fired() <-chan struct{} { return st.fired }

// Result is the lease as written with the change, and its revision; for
// after Fired.
func (st *Standing) Result() (*schemas.Lease, uint64) { return st.l, st.rev }

// Withdraw ends a standing update and reports whether its change was
// written (then the caller must act on it). It waits for a write in flight
// that carries the change.
func (s *Store) Withdraw(st *Standing) (fired bool) {
	s.mu.Lock()
	s.unstand(st)
	s.mu.Unlock()
	st.mu.Lock()
	defer st.mu.Unlock()
	st.withdrawn = true
	return isFired(st)
}

// runStanding applies the key's standing updates to l after a batch's own
// changes. It returns those that changed it, locked until the write's
// outcome is known (landStanding or dropStanding).
func (s *Store) runStanding(key string, l *schemas.Lease) []*Standing {
	s.mu.Lock()
	list := append([]*Standing(nil), s.standing[key]...)
	s.mu.Unlock()
	var changed []*Standing
	for _, st := range list {
		st.mu.Lock()
		if st.withdrawn || isFired(st) {
			st.mu.Unlock()
			continue
		}
		if st.fn(l) != nil {
			st.mu.Unlock()
			continue
		}
		changed = append(changed, st)
	}
	return changed
}

// landStanding fires the standing updates whose change was written.
func (s *Store) landStanding(sts []*Standing, l *schemas.Lease, rev uint64) {
	s.mu.Lock()
	for _, st := range sts {
		s.unstand(st)
	}
	s.mu.Unlock()
	for _, st := range sts {
		st.l, st.rev = l, rev
		close(st.fired)
		st.mu.Unlock()
	}
}

// unstand takes st off its key's list; s.mu is held.
func (s *Store) unstand(st *Standing) {
	list := slices.DeleteFunc(s.standing[st.key], func(x *Standing) bool { return x == st })
	if len(list) == 0 {
		delete(s.standing, st.key)
		return
	}
	s.standing[st.key] = list
}

// dropStanding releases standing updates whose write did not land; they
// stand on.
func dropStanding(sts []*Standing) {
	for _, st := range sts {
		st.mu.Unlock()
	}
}

func isFired(st *Standing) bool {
	select {
	case <-st.fired:
		return true
	default:
		return false
	}
}
