package stage

import (
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A delivery's first retries run again in this process instead of being
// nak'ed: a result a moment early for the reorder, a lease write that lost
// a race. That saves the nak, the redelivery and its round trips, and a
// message is held only for short delays, well inside its ack wait. Past
// them, or when the stage stops, the message goes back to the server as
// before.
const (
	inProcessRetries = 3
	maxInProcess     = 500 * time.Millisecond
)

// A message whose handling failed because JetStream was unavailable
// (jserr.Unavailable) is held in process and tried again every
// unavailableRetry, kept in progress, for up to maxUnavailableAttempts
// tries (30 s); past them it is nak'ed with the back-off as any retry.
const (
	unavailableRetry       = 250 * time.Millisecond
	maxUnavailableAttempts = 120
)

// later holds the messages waiting for an in-process retry.
type later struct {
	// gate is held for reading while a retry is handed to its lane; stop
	// takes it to wait for those under way.
	gate    sync.RWMutex
	mu      sync.Mutex
	stopped bool
	pending map[*time.Timer]jetstream.Msg
	submit  func(m jetstream.Msg, attempt int)
}

func newLater(submit func(jetstream.Msg, int)) *later {
	return &later{pending: map[*time.Timer]jetstream.Msg{}, submit: submit}
}

// after runs the message's attempt-th handling in d; false when the stage
// is stopping (the caller naks instead).
func (l *later) after(d time.Duration, m jetstream.Msg, attempt int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return false
	}
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		l.mu.Lock()
		_, mine := l.pending[t]
		delete(l.pending, t)
		l.mu.Unlock()
		if !mine {
			return // stop took it
		}
		l.gate.RLock()
		defer l.gate.RUnlock()
		l.mu.Lock()
		stopped := l.stopped
		l.mu.Unlock()
		if stopped {
			_ = m.Nak()
			return
		}
		l.submit(m, attempt)
	})
	l.pending[t] = m
	return true
}

// stop hands every waiting message back to the server and waits for the
// retries being handed to their lanes, so that none comes after the lanes
// close.
func (l *later) stop() {
	l.mu.Lock()
	l.stopped = true
	pending := l.pending
	l.pending = nil
	l.mu.Unlock()
	for t, m := range pending {
		t.Stop()
		_ = m.Nak()
	}
	l.gate.Lock()
	defer l.gate.Unlock()
}
