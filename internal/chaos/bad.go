package chaos

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// badPrefix starts the turn token of every malformed event's subject, and
// the ce-id of those that have one: the dead letters are matched to what
// was sent by it.
const badPrefix = "chaosbad"

// malformed is the i-th hostile event, as a producer with a bug or an
// attacker would publish it straight on the input subject: a body that
// does not decode, an unknown type, no CloudEvents headers at all, a seq
// far past the calls a turn may have, an id over the limit, a call after
// its turn's end, and (one in a thousand) an input over the size limit.
func malformed(sp subjects.Space, i int, finished string) *nats.Msg {
	turn := fmt.Sprintf("%s%d", badPrefix, i)
	kind, typ := subjects.KindUse, schemas.TypeToolUse
	var body string
	switch {
	case i%1000 == 999:
		body = `{"seq":0,"tool_use_id":"big","name":"Sleep","input":{"x":"` + strings.Repeat("a", 2<<20) + `"},"complete":true}`
	case i%6 == 0:
		body = `{"seq":0,"tool_use_id":"x","name":`
	case i%6 == 1:
		typ, body = "dev.toolwire.no_such_event.v1", `{}`
	case i%6 == 2:
		typ = ""
		body = `{"seq":0,"tool_use_id":"x","name":"Sleep","input":{},"complete":true}`
	case i%6 == 3:
		body = `{"seq":1000000000,"tool_use_id":"x","name":"Sleep","input":{},"complete":true}`
	case i%6 == 4:
		body = `{"seq":0,"tool_use_id":"` + strings.Repeat("i", 10000) + `","name":"Sleep","input":{},"complete":true}`
	default:
		if finished != "" {
			turn = finished
			body = `{"seq":9,"tool_use_id":"late","name":"Bash","input":{"command":"echo late >> ledger"},"complete":true}`
		} else {
			body = `[1,2,3]`
		}
	}
	m := nats.NewMsg(sp.In(subjects.DefaultTenant, turn, kind))
	if typ != "" {
		m.Header.Set("ce-specversion", "1.0")
		m.Header.Set("ce-id", fmt.Sprintf("%s-%d", badPrefix, i))
		m.Header.Set("ce-source", "/chaos")
		m.Header.Set("ce-type", typ)
		m.Header.Set("ce-datacontenttype", "application/json")
	}
	m.Data = []byte(body)
	return m
}

// badKind names the kind of the i-th malformed event.
func badKind(i int) string {
	if i%1000 == 999 {
		return "over the size limit"
	}
	return [...]string{"undecodable", "unknown type", "no CloudEvents headers", "seq over the limit", "id over the limit", "after its turn's end"}[i%6]
}

// inject publishes n malformed events, spread evenly until stopAt; it
// returns how many the server stored (a publish refused while a node is
// away is sent again).
func inject(ctx context.Context, js jetstream.JetStream, sp subjects.Space, n int, stopAt time.Time, finished func(int) string) int {
	if n <= 0 {
		return 0
	}
	gap := time.Until(stopAt) / time.Duration(n)
	next := time.Now()
	sent := 0
	for i := range n {
		if d := time.Until(next); d > 0 {
			select {
			case <-ctx.Done():
				return sent
			case <-time.After(d):
			}
		}
		next = next.Add(gap)
		m := malformed(sp, i, finished(i))
		for ctx.Err() == nil {
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := js.PublishMsg(pctx, m, jetstream.WithMsgID(fmt.Sprintf("%s-%d", badPrefix, i)))
			cancel()
			if err == nil {
				sent++
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return sent
}

// badIndex is the malformed event a dead letter copies, -1 for another.
func badIndex(h nats.Header) int {
	var i int
	if id := h.Get("ce-id"); strings.HasPrefix(id, badPrefix+"-") {
		if _, err := fmt.Sscanf(id, badPrefix+"-%d", &i); err == nil {
			return i
		}
	}
	for _, tok := range strings.Split(h.Get(schemas.HeaderDLQSubject), ".") {
		if strings.HasPrefix(tok, badPrefix) {
			if _, err := fmt.Sscanf(tok, badPrefix+"%d", &i); err == nil {
				return i
			}
		}
	}
	return -1
}
