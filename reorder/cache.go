package reorder

import (
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/schemas"
)

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
	// done is the turns this instance finished, apart from the turns in
	// progress so that their bound does not wipe those.
	done map[string]struct{}
	// heldBytes is what the waiting results kept take.
	heldBytes int
}

type turnEntry struct {
	cur      cursor
	hasCur   bool
	total    int
	hasTotal bool
	// waiting is the results this instance saw arrive behind a gap: the
	// only ones worth looking for when the gap fills, kept as they came
	// while the instance's budget allows (else read back). Seqs are below
	// the calls-per-turn limit, so the set is bounded.
	waiting map[int]*held
}

// held is a result waiting behind a gap, as it arrived; nil fields when
// it was not kept.
type held struct {
	h    nats.Header
	body []byte
	res  *schemas.ToolResult
}

// heldBudget bounds the bytes of results an instance keeps in memory while
// they wait behind gaps.
const heldBudget = 64 << 20

func newTurnCache(max int) *turnCache {
	return &turnCache{max: max, turns: map[string]*turnEntry{}, done: map[string]struct{}{}}
}

func (c *turnCache) entry(key string) *turnEntry {
	e := c.turns[key]
	if e == nil {
		if len(c.turns) >= c.max {
			// Simple and bounded: forget everything; the stream has it all.
			c.turns, c.heldBytes = map[string]*turnEntry{}, 0
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
	if _, ok := c.done[key]; ok {
		return cursor{done: true}, true
	}
	if e := c.turns[key]; e != nil && e.hasCur {
		return e.cur, true
	}
	return cursor{}, false
}

// keep caches a turn's cursor, dropping what waited for a slot the cursor
// has passed. A finished turn moves to the done set: the redeliveries of
// its waiting messages are then acknowledged unread.
func (c *turnCache) keep(key string, cur cursor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur.done {
		if e := c.turns[key]; e != nil {
			c.release(e)
			delete(c.turns, key)
		}
		if len(c.done) >= c.max {
			c.done = map[string]struct{}{}
		}
		c.done[key] = struct{}{}
		return
	}
	e := c.entry(key)
	e.cur, e.hasCur = cur, true
	for seq, w := range e.waiting {
		if seq < cur.delivered {
			c.heldBytes -= w.size()
			delete(e.waiting, seq)
		}
	}
}

// release drops what e keeps waiting.
func (c *turnCache) release(e *turnEntry) {
	for _, w := range e.waiting {
		c.heldBytes -= w.size()
	}
	e.waiting = nil
}

func (w *held) size() int {
	if w == nil {
		return 0
	}
	return len(w.body)
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

// learnTotal caches a turn's count as a result carried it, unless the
// turn's count is known already (it never changes).
func (c *turnCache) learnTotal(key string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entry(key); !e.hasTotal {
		e.total, e.hasTotal = n, true
	}
}

// wait records that the result of seq came and waits behind a gap, with
// the message itself while the budget allows.
func (c *turnCache) wait(key string, seq int, h nats.Header, body []byte, res *schemas.ToolResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entry(key)
	if e.waiting == nil {
		e.waiting = map[int]*held{}
	}
	if _, ok := e.waiting[seq]; ok {
		return
	}
	var w *held
	if res != nil && c.heldBytes+len(body) <= heldBudget {
		w = &held{h: h, body: body, res: res}
		c.heldBytes += len(body)
	}
	e.waiting[seq] = w
}

// waits reports whether the result of seq was seen waiting, and returns
// it when it was kept; either way it is forgotten.
func (c *turnCache) waits(key string, seq int) (w *held, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.turns[key]
	if e == nil {
		return nil, false
	}
	w, ok = e.waiting[seq]
	delete(e.waiting, seq)
	c.heldBytes -= w.size()
	return w, ok
}
