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
		var n int
		err := readOnce(ctx, js, stream, filter, func(m jetstream.Msg) { n++; each(m) })
		if err == nil || n > 0 || !jserr.Unavailable(err) || time.Now().After(deadline) {
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
func audit(ctx context.Context, js jetstream.JetStream, sp subjects.Space, ours map[string]bool) (map[string]*stored, error) {
	out := map[string]*stored{}
	err := readAll(ctx, js, sp.OutStream(), sp.OutAll(), func(m jetstream.Msg) {
		turn := m.Subject()[strings.LastIndexByte(m.Subject(), '.')+1:]
		if !ours[turn] {
			return
		}
		s := out[turn]
		if s == nil {
			s = &stored{}
			out[turn] = s
		}
		_, d, err := schemas.Decode(m.Headers(), m.Data())
		switch d := d.(type) {
		case *schemas.ToolResult:
			if err == nil {
				s.seqs = append(s.seqs, d.Seq)
			}
		case *schemas.TurnDone:
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
func deadLetters(ctx context.Context, js jetstream.JetStream, sp subjects.Space) (matched, total int, others []string, err error) {
	seen := map[int]bool{}
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
