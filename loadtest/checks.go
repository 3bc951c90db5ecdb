package loadtest

import (
	"time"

	"github.com/toolwire/toolwire/internal/refsched"
)

// delivery is one result as the client received it.
type delivery struct {
	seq           int
	at            time.Time
	start, finish time.Time
	isError       bool
}

// turnObs is what one turn's run observed.
type turnObs struct {
	spec turnSpec
	// pubAt is when each call's tool_use was published (zero: never).
	pubAt []time.Time
	// deliveries in the order received.
	deliveries []delivery
	// doneAt is when turn_done arrived (zero: it never did).
	doneAt time.Time
	err    error
}

// verdict is what the checks found in one turn.
type verdict struct {
	published, lost, duplicates, order int
	concurrency                        bool
}

// check holds one turn's deliveries to the contract: each published call
// answered once (lost, duplicates), no result delivered while an earlier
// call's result had not been (order), and the results' spans obeying the
// start rule under maxConc (concurrency, checked on the longest prefix of
// calls that all have a result).
func check(o *turnObs, maxConc int) verdict {
	var v verdict
	n := len(o.spec.safe)
	for _, t := range o.pubAt {
		if !t.IsZero() {
			v.published++
		}
	}
	seen := make(map[int]delivery, len(o.deliveries))
	for _, d := range o.deliveries {
		if _, dup := seen[d.seq]; dup {
			v.duplicates++
			continue
		}
		if d.seq > len(seen) {
			v.order++
		}
		seen[d.seq] = d
	}
	for i := range n {
		if _, ok := seen[i]; !ok && i < len(o.pubAt) && !o.pubAt[i].IsZero() {
			v.lost++
		}
	}
	var spans []refsched.Span
	for i := range n {
		d, ok := seen[i]
		if !ok {
			break
		}
		spans = append(spans, refsched.Span{Start: d.start, End: d.finish})
	}
	if len(spans) > 0 && refsched.Check(o.spec.safe[:len(spans)], spans, maxConc) != nil {
		v.concurrency = true
	}
	return v
}
