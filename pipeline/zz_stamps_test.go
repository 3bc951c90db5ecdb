package pipeline_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/testtools"
)

func TestZZStamps(t *testing.T) {
	srv := testenv.Server(t)
	p := testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...), Executors: 2})
	_ = p
	cl := testenv.Client(t, srv)
	js := testenv.JS(t, srv, "stamps")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	calls := []client.Call{{ID: "toolu_0", Name: "Noop", Input: []byte(`{"n":1}`)}}
	done := make(chan struct{})
	sub := map[string][4]time.Time{}
	var mu = make(chan struct{}, 1)
	for w := range 16 {
		go func() {
			for n := 0; n < 150; n++ {
				turn := fmt.Sprintf("st_%d_%d", w, n)
				t0 := time.Now()
				errc := make(chan error, 1)
				go func() { errc <- cl.SubmitCalls(ctx, turn, calls, client.TurnOptions{}) }()
				var st [4]time.Time
				st[0] = t0
				for d, err := range cl.Results(ctx, turn) {
					if err != nil {
						break
					}
					if d.Done != nil {
						st[3] = time.Now()
						break
					}
					st[1], st[2] = d.Result.StartedAt, d.At
				}
				<-errc
				mu <- struct{}{}
				sub[turn] = st
				<-mu
			}
			done <- struct{}{}
		}()
	}
	for range 16 {
		<-done
	}
	sp := subjects.Default()
	get := func(stream, subj string) time.Time {
		s, _ := js.Stream(ctx, stream)
		m, err := s.GetLastMsgForSubject(ctx, subj)
		if err != nil {
			return time.Time{}
		}
		return m.Time
	}
	var d [6][]float64
	for turn, st := range sub {
		in := get(sp.InStream(), sp.In("default", turn, "use"))
		end := get(sp.InStream(), sp.In("default", turn, "end"))
		res := get(sp.ResultStream(), sp.Result("default", turn, 0))
		if in.IsZero() || res.IsZero() {
			continue
		}
		ms := func(a, b time.Time) float64 { return float64(b.Sub(a).Microseconds()) / 1000 }
		d[0] = append(d[0], ms(st[0], in))
		d[1] = append(d[1], ms(in, end))
		d[2] = append(d[2], ms(in, st[1]))
		d[3] = append(d[3], ms(st[1], res))
		d[4] = append(d[4], ms(res, st[2]))
		d[5] = append(d[5], ms(st[2], st[3]))
	}
	names := []string{"submit->in", "in use->in end", "in->started", "started->result stored", "result stored->client", "client result->done"}
	for i, v := range d {
		sort.Float64s(v)
		t.Logf("%-16s p50 %.3f p90 %.3f p99 %.3f ms", names[i], v[len(v)/2], v[len(v)*9/10], v[len(v)*99/100])
	}
}
