package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/internal/top"
	"github.com/toolwire/toolwire/subjects"
)

// topWait bounds one snapshot's reads.
const topWait = 10 * time.Second

func newTop() *cobra.Command {
	var (
		natsURL      string
		once, asJSON bool
		turns        int
		every        time.Duration
		auth         natsAuth
	)
	cmd := &cobra.Command{
		Use:   "top [--nats URL] [--once] [--json]",
		Short: "A live view of the turns in flight, running calls, consumer lag, dead letters and approvals",
		Long: `top shows what the pipeline at --nats is doing, refreshed every second: the turns
in flight (calls waiting, running, done) and the last finished ones, the calls
running on each worker by tool, each stage consumer's lag and pending acks, the
dead letters and the approval requests waiting for a person.

--once prints one snapshot and exits; with --json it is one JSON object (the
shape is in docs/http-api.md), for scripts. Plain text, no color; on a terminal
the screen is redrawn in place.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if every <= 0 {
				return usageError("top: --every must be positive")
			}
			if asJSON && !once {
				return usageError("top: --json needs --once (one snapshot a run)")
			}
			opts, err := auth.options()
			if err != nil {
				return usageError("top: %w", err)
			}
			natsURL = natsURLOrEnv(cmd, natsURL)
			nc, err := nats.Connect(natsURL, append([]nats.Option{nats.Name("toolwire-top")}, opts...)...)
			if err != nil {
				return fmt.Errorf("top: connect %s: %w", natsURL, err)
			}
			defer nc.Close()
			js, err := jetstream.New(nc)
			if err != nil {
				return fmt.Errorf("top: %w", err)
			}
			ctx := cmd.Context()
			w, err := top.Watch(ctx, js, subjects.Default())
			if err != nil {
				return err
			}
			defer w.Close()
			out := cmd.OutOrStdout()
			show := func() error {
				sctx, cancel := context.WithTimeout(ctx, topWait)
				defer cancel()
				s, err := w.Snapshot(sctx, top.Options{Turns: turns})
				if s == nil {
					return err
				}
				if asJSON {
					enc := json.NewEncoder(out)
					enc.SetIndent("", "  ")
					if werr := enc.Encode(s); werr != nil {
						return werr
					}
					return err
				}
				if terminal(out) && !once {
					io.WriteString(out, "\x1b[H\x1b[2J") // home and clear: redraw in place
				}
				if werr := top.Render(out, nc.ConnectedUrlRedacted(), s); werr != nil {
					return werr
				}
				if err != nil {
					fmt.Fprintf(out, "\n(part of the view is missing: %v)\n", err)
				}
				if !terminal(out) && !once {
					fmt.Fprintln(out)
				}
				return nil
			}
			if once {
				return show()
			}
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				if err := show(); err != nil {
					return err
				}
				select {
				case <-ctx.Done():
					return nil
				case <-tick.C:
				}
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&natsURL, "nats", nats.DefaultURL, "NATS server of the pipeline")
	f.BoolVar(&once, "once", false, "print one snapshot and exit")
	f.BoolVar(&asJSON, "json", false, "with --once: the snapshot as JSON")
	f.IntVar(&turns, "turns", top.DefaultTurns, "turns listed: those in flight, oldest first, then the last finished")
	f.DurationVar(&every, "every", time.Second, "refresh interval")
	auth.register(f)
	return cmd
}

// terminal reports whether w is a terminal.
func terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}
