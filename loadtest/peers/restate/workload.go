package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/restatedev/sdk-go/ingress"
)

// The two ways a turn's calls are made durable.
const (
	// ModeSideEffects is one invocation per turn, its calls journaled side
	// effects run in parallel inside it.
	ModeSideEffects = "side-effects"
	// ModeInvocations is one invocation per call, a turn's calls sent
	// together.
	ModeInvocations = "invocations"
)

// client sends turns to the ingress, request/response.
type client struct {
	mode  string
	turn  ingress.Requester[TurnRequest, []CallResult]
	call  ingress.Requester[CallRequest, CallResult]
	turns atomic.Int64 // for turn ids
}

// newClient is an ingress client whose connection pool holds a connection
// for every request that can be in flight at once, so that none is opened
// on the hot path after the first turns.
// callRun picks the CallRun handler for invocations mode.
func newClient(ingressURL, mode string, callRun bool, inflight int) *client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = inflight, inflight
	c := ingress.NewClient(ingressURL, ingress.WithHttpClient(&http.Client{Transport: tr}))
	handler := "Call"
	if callRun {
		handler = "CallRun"
	}
	return &client{
		mode: mode,
		turn: ingress.Service[TurnRequest, []CallResult](c, ServiceName, "Turn"),
		call: ingress.Service[CallRequest, CallResult](c, ServiceName, handler),
	}
}

// runTurn runs one turn of k calls and returns what it saw.
func (c *client) runTurn(ctx context.Context, k int) *turnObs {
	id := fmt.Sprintf("turn_%d", c.turns.Add(1))
	o := &turnObs{calls: k, start: time.Now()}
	if c.mode == ModeSideEffects {
		res, err := c.turn.Request(ctx, TurnRequest{Turn: id, Calls: k})
		at := time.Now()
		o.err = err
		for _, r := range res {
			o.deliveries = append(o.deliveries, delivery{seq: own(id, r), at: at})
		}
		return o
	}
	// Each call's response is put in its call's place: the agent takes the
	// turn's results in call order once they are all in.
	slots := make([]*delivery, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := range k {
		wg.Go(func() {
			r, err := c.call.Request(ctx, CallRequest{Turn: id, Seq: i})
			if errs[i] = err; err == nil {
				slots[i] = &delivery{seq: own(id, r), at: time.Now()}
			}
		})
	}
	wg.Wait()
	for i, d := range slots {
		if d != nil {
			o.deliveries = append(o.deliveries, *d)
		} else if o.err == nil {
			o.err = errs[i]
		}
	}
	return o
}

// own is the call a result answers, or -1 for a result of another turn.
func own(turn string, r CallResult) int {
	if r.Turn != turn {
		return -1
	}
	return r.Seq
}
