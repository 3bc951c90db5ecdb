package lease

import (
	"sync"
	"time"

	"github.com/toolwire/toolwire/schemas"
)

// cacheKeys bounds the turns a Store remembers.
const cacheKeys = 10_000

// revCache remembers, per key, the lease this process last read, wrote or
// was notified of, with its revision, so that an update can try its
// compare-and-set at once instead of reading first. A stale entry costs a
// refused write and a read, never a wrong write: the compare-and-set
// checks the revision.
//
// A decision not to write, though, is only as good as what it was made
// on. An entry is trusted for it while the key is watched and confirmed:
// a read or a write of this process has landed since the watch began, so
// every later write reaches the entry through the watch. Otherwise a
// decision not to write is checked with a read (Store.apply).
type revCache struct {
	mu   sync.Mutex
	keys map[string]*cacheEntry
	// clock orders watches and requests: a request confirms a watch only
	// if it was sent after the watch's subscription (since <= its time).
	clock uint64
	// unwatched counts the entries no watch holds, the ones the bound
	// may drop.
	unwatched int
}

type cacheEntry struct {
	b   []byte // the lease as stored; nil when only watched
	rev uint64
	// l is b decoded, once asked for; never changed (handed out cloned).
	l *schemas.Lease
	// watched counts this process's watches of the key; confirmed is set
	// by the first read or write after the watch began.
	watched   int
	confirmed bool
	// since is the clock when the first of the current watches began.
	since uint64
	// moved is closed and replaced when rev moves on.
	moved chan struct{}
}

func newRevCache() *revCache { return &revCache{keys: map[string]*cacheEntry{}} }

// get returns a copy of the key's lease as cached, for the caller to
// change, and whether a decision made on it needs no read.
func (c *revCache) get(key string) (l *schemas.Lease, rev uint64, trusted, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.keys[key]
	if e == nil || e.b == nil {
		return nil, 0, false, false
	}
	if e.l == nil {
		// Decoded once per write, however many updates go on it.
		d, err := schemas.DecodeLease(e.b)
		if err != nil {
			e.b, e.rev, e.confirmed = nil, 0, false
			return nil, 0, false, false
		}
		e.l = d
	}
	return e.l.Clone(), e.rev, e.watched > 0 && e.confirmed, true
}

// now is the time to stamp a request with before it is sent.
func (c *revCache) now() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.clock
}

// put records the lease at rev, read or written by this process with a
// request sent at sent: what the server held at that moment. It confirms a
// watch whose subscription went out before the request (on the same
// connection, so the server has it first). l is b decoded, which the
// cache keeps and nobody may change.
func (c *revCache) put(key string, b []byte, l *schemas.Lease, rev, sent uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(key)
	if e.watched > 0 && e.since <= sent {
		e.confirmed = true
	}
	if rev >= e.rev {
		e.set(b, rev)
		e.l = l
	}
}

func (e *cacheEntry) set(b []byte, rev uint64) {
	e.b, e.rev, e.l = b, rev, nil
	if e.moved != nil {
		close(e.moved)
		e.moved = nil
	}
}

// newer waits, at most d, for a watched key's lease to move past rev (a
// write of another process that refused ours is on its way to the watch)
// and reports whether it did. The notification saves reading the lease.
func (c *revCache) newer(key string, rev uint64, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		c.mu.Lock()
		e := c.keys[key]
		if e == nil || e.watched == 0 || !e.confirmed {
			c.mu.Unlock()
			return false
		}
		if e.b != nil && e.rev > rev {
			c.mu.Unlock()
			return true
		}
		if e.moved == nil {
			e.moved = make(chan struct{})
		}
		moved := e.moved
		c.mu.Unlock()
		select {
		case <-moved:
		case <-t.C:
			return false
		}
	}
}

// hint records a lease another process wrote, without confirming a watch.
func (c *revCache) hint(key string, b []byte, rev uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(key)
	if rev > e.rev {
		e.set(b, rev)
	}
}

// observe records a write the watch was told of; notifications may come
// after a read that already saw them, so only a newer one replaces.
func (c *revCache) observe(key string, b []byte, rev uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.keys[key]
	if e == nil || rev < e.rev {
		return
	}
	e.set(b, rev)
	if e.watched > 0 {
		// It came through the subscription, so every later write will
		// too: the entry is as fresh as the notifications.
		e.confirmed = true
	}
}

// forget drops what is known of the key's lease (it was deleted, or a
// write was refused): the next update reads. A watch stays counted.
func (c *revCache) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.keys[key]; e != nil {
		e.b, e.rev, e.l, e.confirmed = nil, 0, nil, false
		if e.watched == 0 {
			c.drop(key, e)
		}
	}
}

// watch counts a watch of key; the first one needs a read or a write to
// confirm, since writes before it were not seen.
func (c *revCache) watch(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(key)
	if e.watched == 0 {
		// The subscription was just sent: requests sent from now on
		// come after it.
		c.clock++
		e.confirmed, e.since = false, c.clock
		c.unwatched--
	}
	e.watched++
}

// unwatch ends a watch; the entry goes with the last one (a turn no call
// of this process waits on is seldom written here again).
func (c *revCache) unwatch(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.keys[key]
	if e == nil {
		return
	}
	if e.watched--; e.watched <= 0 {
		// Unwatched for an instant, then gone.
		c.unwatched++
		c.drop(key, e)
	}
}

// drop removes an entry, keeping the count of unwatched ones.
func (c *revCache) drop(key string, e *cacheEntry) {
	if e.watched == 0 {
		c.unwatched--
	}
	delete(c.keys, key)
}

// entry returns the key's entry, made when missing. At the bound, the
// entries nothing watches are dropped: simple, and the server has them all.
func (c *revCache) entry(key string) *cacheEntry {
	e := c.keys[key]
	if e == nil {
		if len(c.keys) >= cacheKeys && c.unwatched > 0 {
			for k, old := range c.keys {
				if old.watched == 0 {
					c.drop(k, old)
				}
			}
		}
		e = &cacheEntry{}
		c.keys[key] = e
		c.unwatched++
	}
	return e
}
