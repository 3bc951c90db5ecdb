// Package localrun runs one turn through a private, in-process pipeline on
// an embedded server in a temporary directory: what `toolwire run` and
// `toolwire demo` do. Everything is real — JetStream, the stages, the tools
// — and all of it is gone when Run returns. It can also send the turn to a
// pipeline served elsewhere (Options.NATS).
package localrun

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/modelstream/formats"
	"github.com/toolwire/toolwire/modelstream/sse"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/permission"
)

// Options describe one run.
type Options struct {
	Format string
	// Stream is the model's response as it came over the wire.
	Stream []byte
	// Pace is a pause between SSE events, to replay a stream at model speed.
	Pace time.Duration
	// WorkDir is the calls' working directory (default: the current one).
	WorkDir string
	Tools   *tool.Registry
	// Executors and Reorders count stage instances (default 1 each).
	Executors int
	Reorders  int
	// MaxConcurrency is the turn's limit (0: the router's default).
	MaxConcurrency int
	// Timeout bounds the whole turn (default 10 minutes).
	Timeout time.Duration
	// Policy is the permission policy of the executors (nil: none).
	Policy *permission.Policy
	// Limits bound what the private pipeline's events may carry (zero
	// fields: the defaults).
	Limits schemas.Limits
	// NATS, when set, joins that pipeline (served elsewhere, by `toolwire
	// serve`) instead of starting a private one: no server, no stages.
	NATS string
	// NATSOptions sign in to it (credentials, TLS).
	NATSOptions []nats.Option
	// OnProgress, when set, gets the turn's progress events as they happen.
	// It runs on another goroutine than onResult.
	OnProgress func(*schemas.ToolProgress)
	// WaitForEnd holds the calls until the stream has ended, then submits
	// them together, as an executor that waits for the end of the stream
	// would run them (the default submits each as its block completes).
	WaitForEnd bool
}

// Report is what happened to the turn.
type Report struct {
	Turn    string
	Stream  client.StreamSummary
	Results []*schemas.ToolResult
	Done    *schemas.TurnDone
	// Received is when each result reached the client, by seq.
	Received []time.Time
	// DoneAt is when turn_done reached the client.
	DoneAt time.Time
}

// Run runs a turn and calls onResult for each result as the agent receives it.
func Run(ctx context.Context, o Options, onResult func(*schemas.ToolResult)) (*Report, error) {
	parser, err := formats.Parser(o.Format)
	if err != nil {
		return nil, err
	}
	if o.WaitForEnd {
		parser = holdCalls(parser)
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.WorkDir == "" {
		if o.WorkDir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()

	space := subjects.Default()
	var nc *nats.Conn
	if o.NATS != "" {
		if nc, err = nats.Connect(o.NATS, append([]nats.Option{nats.Name("toolwire-run-client")}, o.NATSOptions...)...); err != nil {
			return nil, fmt.Errorf("localrun: connect %s: %w", o.NATS, err)
		}
	} else {
		dir, err := os.MkdirTemp("", "toolwire-run-")
		if err != nil {
			return nil, fmt.Errorf("localrun: %w", err)
		}
		defer os.RemoveAll(dir)
		srv, err := embedded.Start(embedded.Options{StoreDir: dir, MaxMemory: 256 << 20, MaxStore: 1 << 30})
		if err != nil {
			return nil, err
		}
		defer srv.Shutdown()
		p, err := pipeline.Start(ctx, srv.Connect, pipeline.Config{
			Space: space, Tools: o.Tools, Executors: o.Executors, Reorders: o.Reorders,
			MaxConcurrency: o.MaxConcurrency, WorkDir: o.WorkDir,
			Executor: executor.Config{Policy: o.Policy}, Limits: o.Limits,
		})
		if err != nil {
			return nil, err
		}
		defer p.Stop()
		if nc, err = srv.Connect("toolwire-run-client"); err != nil {
			return nil, err
		}
	}
	defer nc.Close()
	cl, err := client.New(nc, client.Config{Space: space})
	if err != nil {
		return nil, err
	}
	rep := &Report{Turn: client.NewTurnID()}
	if o.OnProgress != nil {
		stop, err := cl.Progress(rep.Turn, o.OnProgress)
		if err != nil {
			return nil, err
		}
		defer stop()
	}

	type submission struct {
		sum client.StreamSummary
		err error
	}
	submitted := make(chan submission, 1)
	// A submission that fails before the turn's end is stored leaves a turn
	// that never completes: stop waiting for it at once, with that failure.
	// One that failed after (a call refused for its size, answered in its
	// place) still ends, and the results are read to the end.
	rctx, stopResults := context.WithCancelCause(ctx)
	defer stopResults(nil)
	go func() {
		sum, err := cl.SubmitStream(ctx, rep.Turn, parser, paced(ctx, o.Format, o.Stream, o.Pace), client.TurnOptions{MaxConcurrency: o.MaxConcurrency})
		if err != nil && !sum.Ended {
			stopResults(err)
		}
		submitted <- submission{sum, err}
	}()
	for d, err := range cl.Results(rctx, rep.Turn) {
		if err != nil {
			if cause := context.Cause(rctx); rctx.Err() != nil && ctx.Err() == nil {
				sub := <-submitted
				rep.Stream = sub.sum
				return rep, fmt.Errorf("localrun: turn %s not submitted: %w", rep.Turn, cause)
			}
			return rep, fmt.Errorf("localrun: waiting for results: %w", err)
		}
		if d.Done != nil {
			rep.Done, rep.DoneAt = d.Done, d.At
			break
		}
		rep.Results = append(rep.Results, d.Result)
		rep.Received = append(rep.Received, d.At)
		if onResult != nil {
			onResult(d.Result)
		}
	}
	sub := <-submitted
	rep.Stream = sub.sum
	return rep, sub.err
}

// pieces splits a stream where a model would pause: between SSE events,
// or, for raw text formats, after each line.
func pieces(format string, stream []byte) [][]byte {
	if format == "hermes" {
		return bytes.SplitAfter(stream, []byte("\n"))
	}
	return sse.Split(stream)
}

// paced feeds stream through a pipe, pausing between its pieces.
func paced(ctx context.Context, format string, stream []byte, pace time.Duration) io.Reader {
	if pace <= 0 {
		return bytes.NewReader(stream)
	}
	pr, pw := io.Pipe()
	go func() {
		t := time.NewTimer(0)
		defer t.Stop()
		for i, chunk := range pieces(format, stream) {
			if i > 0 {
				t.Reset(pace)
				select {
				case <-t.C:
				case <-ctx.Done():
					pw.CloseWithError(ctx.Err())
					return
				}
			}
			if _, err := pw.Write(chunk); err != nil {
				return
			}
		}
		pw.Close()
	}()
	return pr
}
