package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/tool/testtools"
)

func TestSimpleTurn(t *testing.T) {
	srv := testenv.Server(t)
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...)})
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer func() {
		if t.Failed() {
			dumpStreams(t, srv)
		}
	}()
	defer cancel()
	calls := []client.Call{
		{ID: "a", Name: "Noop", Input: json.RawMessage(`{"x":1}`)},
		{ID: "b", Name: "Sleep", Input: json.RawMessage(`{"ms":5}`)},
		{ID: "c", Name: "Nope", Input: json.RawMessage(`{}`)},
		{ID: "d", Name: "Noop", Input: json.RawMessage(`{}`)},
	}
	if err := cl.SubmitCalls(ctx, "t1", calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for d, err := range cl.Results(ctx, "t1") {
		if err != nil {
			t.Fatal(err)
		}
		if d.Done != nil {
			if d.Done.Results != len(calls) {
				t.Fatalf("done with %d", d.Done.Results)
			}
			break
		}
		t.Logf("%+v", *d.Result)
		if d.Result.Seq != n {
			t.Fatalf("seq %d at %d", d.Result.Seq, n)
		}
		n++
	}
	if n != len(calls) {
		t.Fatal(fmt.Sprint("got ", n))
	}
}
