package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/tool/testtools"
)

func TestZZTrace(t *testing.T) {
	perTurn, inflight, turns := 10, 16, 400
	if os.Getenv("TRACE_ONE") != "" {
		perTurn, inflight, turns = 1, 16, 2000
	}
	srv := testenv.Server(t)
	p := testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...), Executors: 2})
	cl := testenv.Client(t, srv)
	nc := testenv.Conn(t, srv, "spy")
	var mu sync.Mutex
	counts := map[string]int{}
	sub, _ := nc.Subscribe(">", func(m *nats.Msg) {
		s := m.Subject
		f := strings.Split(s, ".")
		var k string
		switch {
		case strings.HasPrefix(s, "_INBOX"):
			k = "_INBOX(reply)"
		case strings.HasPrefix(s, "$JS.ACK"):
			k = "$JS.ACK " + f[3] + " " + string(m.Data)
		case strings.HasPrefix(s, "$JS.API"):
			k = strings.Join(f[:min(len(f), 4)], ".") + " " + f[min(len(f)-1, 4)]
		case strings.HasPrefix(s, "$KV"):
			k = f[0] + "." + f[1]
		default:
			if len(f) > 2 {
				k = f[0] + "." + f[2]
				if strings.HasSuffix(f[0], "_lease") {
					k = f[0]
				}
				if len(f) > 3 && f[2] == "in" {
					k += "." + f[len(f)-1]
				}
			} else {
				k = s
			}
		}
		mu.Lock()
		counts[k]++
		mu.Unlock()
	})
	sub.SetPendingLimits(-1, -1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	calls := make([]client.Call, perTurn)
	for i := range calls {
		calls[i] = client.Call{ID: fmt.Sprintf("toolu_%d", i), Name: "Noop", Input: json.RawMessage(`{"n":1}`)}
	}
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	counts = map[string]int{}
	mu.Unlock()
	before := p.Stats()
	start := time.Now()
	var wg sync.WaitGroup
	var next int64
	var nmu sync.Mutex
	for w := range inflight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				nmu.Lock()
				next++
				n := next
				nmu.Unlock()
				if n > int64(turns) {
					return
				}
				turn := fmt.Sprintf("tr_%d_%d", w, n)
				errc := make(chan error, 1)
				go func() { errc <- cl.SubmitCalls(ctx, turn, calls, client.TurnOptions{}) }()
				for d, err := range cl.Results(ctx, turn) {
					if err != nil {
						t.Error(err)
						return
					}
					if d.Done != nil {
						break
					}
				}
				<-errc
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	after := p.Stats()
	time.Sleep(200 * time.Millisecond)
	total := float64(turns * perTurn)
	mu.Lock()
	defer mu.Unlock()
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return counts[keys[i]] > counts[keys[j]] })
	for _, k := range keys {
		t.Logf("%8.2f  %s", float64(counts[k])/total, k)
	}
	t.Logf("calls/s %.0f stage out msgs/call %.2f", total/el.Seconds(), float64(after.OutMsgs-before.OutMsgs)/total)
}
