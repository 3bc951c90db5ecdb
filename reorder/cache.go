package reorder

import "sync"

// cacheTurns bounds the turns an instance remembers.
const cacheTurns = 10_000

// turnCache remembers, per turn, the cursor an instance last saw and the
// turn's end count, saving a read of each per result. It is only ever a
// hint: every append still expects the out subject's last sequence, so a
// stale cursor costs a retry, never a wrong delivery; and an end count,
// once known, never changes.
type turnCache struct {
	mu    sync.Mutex
	max   int
	turns map[string]*turnEntry
}

type turnEntry struct {
	cur      cursor
	hasCur   bool
	total    int
	hasTotal bool
}

func newTurnCache(max int) *turnCache {
	return &turnCache{max: max, turns: map[string]*turnEntry{}}
}

func (c *turnCache) entry(key string) *turnEntry {
	e := c.turns[key]
	if e == nil {
		if len(c.turns) >= c.max {
			// Simple and bounded: forget everything; the stream has it all.
			c.turns = map[string]*turnEntry{}
		}
		e = &turnEntry{}
		c.turns[key] = e
	}
	return e
}

// cursor returns the cached cursor of a turn, if any.
func (c *turnCache) cursor(key string) (cursor, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.turns[key]; e != nil && e.hasCur {
		return e.cur, true
	}
	return cursor{}, false
}

// keep caches a turn's cursor; a finished turn is forgotten.
func (c *turnCache) keep(key string, cur cursor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur.done {
		delete(c.turns, key)
		return
	}
	e := c.entry(key)
	e.cur, e.hasCur = cur, true
}

// total returns a turn's cached end count, if known.
func (c *turnCache) total(key string) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.turns[key]; e != nil && e.hasTotal {
		return e.total, true
	}
	return 0, false
}

// keepTotal caches a turn's end count.
func (c *turnCache) keepTotal(key string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(key)
	e.total, e.hasTotal = n, true
}
