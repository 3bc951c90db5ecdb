package chaos

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/jserr"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// stored is what a turn's out subject holds, read from the stream itself
// rather than through the client: its results' seqs in stored order, and
// whether turn_done follows.
type stored struct {
	seqs []int
	done bool
}

// readAll reads every message of a stream (filtered by subject) with an
// ordered consumer, until the last one there was when it began. While the
// cluster cannot answer (a member just came back) it tries again, for at
// most a minute.
func readAll(ctx context.Context, js jetstream.JetStream, stream, filter string, each func(jetstream.Msg)) error {
	deadline := time.Now().Add(time.Minute)
	for {
		var got []jetstream.Msg
		err := readOnce(ctx, js, stream, filter, func(m jetstream.Msg) { got = append(got, m) })
		if err == nil {
			for _, m := range got {
				each(m)
			}
			return nil
		}
		if !jserr.Unavailable(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(time.Second)
	}
}

func readOnce(ctx context.Context, js jetstream.JetStream, stream, filter string, each func(jetstream.Msg)) error {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return err
	}
	if info.State.Msgs == 0 {
		return nil
	}
	last := info.State.LastSeq
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}})
	if err != nil {
		return err
	}
	for {
		batch, err := cons.Fetch(500, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return err
		}
		n := 0
		for m := range batch.Messages() {
			n++
			each(m)
			if md, err := m.Metadata(); err == nil && md.Sequence.Stream >= last {
				return nil
			}
		}
		if err := batch.Error(); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
	}
}

// audit reads the out stream: for every turn of the run, what it holds.
func audit(ctx context.Context, js jetstream.JetStream, sp subjects.Space, ours map[string]int) (map[string]*stored, error) {
	out := map[string]*stored{}
	err := readAll(ctx, js, sp.OutStream(), sp.OutAll(), func(m jetstream.Msg) {
		turn := m.Subject()[strings.LastIndexByte(m.Subject(), '.')+1:]
		if _, mine := ours[turn]; !mine {
			return
		}
		s := out[turn]
		if s == nil {
			s = &stored{}
			out[turn] = s
		}
		meta, d, err := schemas.Decode(m.Headers(), m.Data())
		if r, ok := d.(*schemas.ToolResult); ok && err == nil {
			s.seqs = append(s.seqs, r.Seq)
		}
		if err == nil && schemas.DoneOf(meta, d) != nil {
			s.done = true
		}
	})
	if err != nil {
		return nil, fmt.Errorf("chaos: read the out stream: %w", err)
	}
	return out, nil
}

// deadLetters counts the malformed events that have a dead letter, each
// once, and all dead letters.
func deadLetters(ctx context.Context, js jetstream.JetStream, sp subjects.Space, seen map[int]bool) (matched, total int, others []string, err error) {
	err = readAll(ctx, js, sp.DLQStream(), sp.DLQAll(), func(m jetstream.Msg) {
		total++
		i := badIndex(m.Headers())
		if i >= 0 && !seen[i] {
			seen[i] = true
			matched++
		}
		if i < 0 && len(others) < 5 {
			others = append(others, m.Headers().Get(schemas.HeaderDLQSubject)+": "+m.Headers().Get(schemas.HeaderDLQReason))
		}
	})
	if err != nil {
		return 0, 0, nil, fmt.Errorf("chaos: read the dead letters: %w", err)
	}
	return matched, total, others, nil
}

// revived counts the turns of the run whose lease holds a call at or past
// the turn's count: a late event made the finished turn live again.
func revived(ctx context.Context, js jetstream.JetStream, sp subjects.Space, calls map[string]int) (int, []string, error) {
	kv, err := js.KeyValue(ctx, sp.LeaseBucket())
	if err != nil {
		return 0, nil, err
	}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return 0, nil, err
	}
	n := 0
	var some []string
	for key := range keys.Keys() {
		turn := key[strings.LastIndexByte(key, '.')+1:]
		want, ours := calls[turn]
		if !ours {
			continue
		}
		e, err := kv.Get(ctx, key)
		if err != nil {
			continue
		}
		l, err := schemas.DecodeLease(e.Value())
		if err != nil {
			continue
		}
		for _, c := range l.Calls {
			if c.Seq >= want {
				n++
				if len(some) < 3 {
					some = append(some, fmt.Sprintf("%s (seq %d %s, total %d)", turn, c.Seq, c.State, l.Total))
				}
				break
			}
		}
	}
	return n, some, nil
}

// diagnose says where a turn that never completed stands: its lease, and
// what the result and out streams hold for it.
func diagnose(ctx context.Context, js jetstream.JetStream, sp subjects.Space, turn string) string {
	var b strings.Builder
	if kv, err := js.KeyValue(ctx, sp.LeaseBucket()); err == nil {
		if e, err := kv.Get(ctx, sp.LeaseKey(subjects.DefaultTenant, turn)); err == nil {
			if l, err := schemas.DecodeLease(e.Value()); err == nil {
				fmt.Fprintf(&b, "lease total %d:", l.Total)
				for _, c := range l.Calls {
					fmt.Fprintf(&b, " %d=%s", c.Seq, c.State)
				}
			}
		} else {
			fmt.Fprintf(&b, "lease: %v", err)
		}
	}
	for _, s := range []struct{ stream, subject string }{
		{sp.InStream(), sp.In(subjects.DefaultTenant, turn, "*")},
		{sp.ResultStream(), sp.TurnResults(subjects.DefaultTenant, turn)},
		{sp.OutStream(), sp.Out(subjects.DefaultTenant, turn)},
	} {
		n := 0
		_ = readOnce(ctx, js, s.stream, s.subject, func(jetstream.Msg) { n++ })
		fmt.Fprintf(&b, "; %s holds %d", s.stream, n)
	}
	return b.String()
}
