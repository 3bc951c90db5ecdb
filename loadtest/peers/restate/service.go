package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	restate "github.com/restatedev/sdk-go"
	"github.com/restatedev/sdk-go/server"
)

// ServiceName is the Restate service both modes invoke: handler Turn for
// side-effects mode, Call (or CallRun) for invocations mode.
const ServiceName = "Tools"

// TurnRequest asks the Turn handler to run a turn's calls.
type TurnRequest struct {
	Turn  string `json:"turn"`
	Calls int    `json:"calls"`
}

// CallRequest asks the Call handler to run one call of a turn.
type CallRequest struct {
	Turn string `json:"turn"`
	Seq  int    `json:"seq"`
}

// CallResult is a call's result: which call it answers, so that the load
// generator can check it was the one asked for, once, in order.
type CallResult struct {
	Turn string `json:"turn"`
	Seq  int    `json:"seq"`
}

// noop is the tool: it does nothing and says which call it was, as
// toolwire's Noop does with no service time.
func noop(turn string, seq int) CallResult { return CallResult{Turn: turn, Seq: seq} }

// turn runs the calls as parallel journaled side effects: all RunAsync first,
// so the SDK may run them together, then their results in call order.
func turn(ctx restate.Context, req TurnRequest) ([]CallResult, error) {
	futs := make([]restate.RunAsyncFuture[CallResult], req.Calls)
	for i := range futs {
		futs[i] = restate.RunAsync(ctx, func(restate.RunContext) (CallResult, error) {
			return noop(req.Turn, i), nil
		}, restate.WithName("tool"))
	}
	out := make([]CallResult, 0, len(futs))
	for _, f := range futs {
		r, err := f.Result()
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// call is one call as an invocation of its own: the invocation is what
// Restate journals (its input and output), so the tool runs in the handler
// directly, as a handler's own work does.
func call(_ restate.Context, req CallRequest) (CallResult, error) {
	return noop(req.Turn, req.Seq), nil
}

// callRun is call with the tool run as a journaled side effect, as in
// side-effects mode: one more journal entry, acknowledged before the
// handler returns.
func callRun(ctx restate.Context, req CallRequest) (CallResult, error) {
	return restate.Run(ctx, func(restate.RunContext) (CallResult, error) {
		return noop(req.Turn, req.Seq), nil
	}, restate.WithName("tool"))
}

// Deployment is the service deployment, served on a loopback port in this
// process.
type Deployment struct {
	// URI is what the server is told to register.
	URI string
	srv *http.Server
}

// ServeDeployment serves the Tools service over HTTP/1.1 and cleartext
// HTTP/2 (Restate's invoker speaks HTTP/2 to it, bidirectionally).
func ServeDeployment() (*Deployment, error) {
	tools := restate.NewService(ServiceName).
		Handler("Turn", restate.NewServiceHandler(turn)).
		Handler("Call", restate.NewServiceHandler(call)).
		Handler("CallRun", restate.NewServiceHandler(callRun))
	// Errors only: the SDK warns, once, that requests are not signed, which
	// on loopback is what is meant.
	logs := slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})
	h, err := server.NewRestate().WithLogger(logs, true).Bind(tools).Handler()
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	d := &Deployment{
		URI: fmt.Sprintf("http://%s", l.Addr()),
		srv: &http.Server{Handler: h, Protocols: &p, ReadHeaderTimeout: 5 * time.Second},
	}
	go func() {
		if err := d.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "service deployment:", err)
		}
	}()
	return d, nil
}

// Close stops serving; the server is stopped first, so nothing is in flight.
func (d *Deployment) Close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return d.srv.Shutdown(ctx)
}
