package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/internal/dlq"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

func newDLQ() *cobra.Command {
	var natsURL string
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "List, show and replay the messages the stages gave up on",
		Long: `The stages copy every message they give up on — one that does not decode,
is over a limit, names no turn, or failed on every delivery — to
tw.<tenant>.dlq.<stage>, with the reason, and go on. dlq lists them, shows one
whole, and sends one back to the subject it first came on once what made it
fail is fixed. A letter is named by its sequence in the dead-letter stream.`,
	}
	cmd.PersistentFlags().StringVar(&natsURL, "nats", nats.DefaultURL, "NATS server of the pipeline")
	var auth natsAuth
	auth.register(cmd.PersistentFlags())
	reader := func(ctx context.Context) (*dlq.Reader, func(), error) {
		opts, err := auth.options()
		if err != nil {
			return nil, nil, usageError("dlq: %w", err)
		}
		natsURL = natsURLOrEnv(cmd, natsURL)
		nc, err := nats.Connect(natsURL, append([]nats.Option{nats.Name("toolwire-dlq")}, opts...)...)
		if err != nil {
			return nil, nil, fmt.Errorf("dlq: connect %s: %w", natsURL, err)
		}
		js, err := jetstream.New(nc)
		if err != nil {
			nc.Close()
			return nil, nil, err
		}
		r, err := dlq.New(ctx, js, subjects.Default())
		if err != nil {
			nc.Close()
			return nil, nil, err
		}
		return r, nc.Close, nil
	}
	cmd.AddCommand(newDLQList(reader), newDLQShow(reader), newDLQReplay(reader))
	return cmd
}

type dlqReader func(ctx context.Context) (*dlq.Reader, func(), error)

func newDLQList(reader dlqReader) *cobra.Command {
	var f dlq.Filter
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [--tenant T] [--stage S] [--limit N]",
		Short: "List dead letters, oldest first: sequence, time, stage, subject, reason",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, done, err := reader(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			letters, err := r.List(cmd.Context(), f)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, l := range letters {
				if asJSON {
					if err := writeJSONLine(w, letterJSON(l, false)); err != nil {
						return err
					}
					continue
				}
				fmt.Fprintf(w, "%d\t%s\t%s/%s\t%s\t%s\n", l.Seq, l.Time.UTC().Format(time.RFC3339), l.Tenant, l.Stage, l.Original, oneLine(l.Reason, 160))
			}
			if !asJSON {
				fmt.Fprintf(cmd.ErrOrStderr(), "%d dead letters\n", len(letters))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Tenant, "tenant", "", "only this tenant's")
	fl.StringVar(&f.Stage, "stage", "", "only this stage's (router, executor, reorder)")
	fl.IntVar(&f.Limit, "limit", 100, "at most this many (0: all)")
	fl.BoolVar(&asJSON, "json", false, "one JSON object a line")
	return cmd
}

func newDLQShow(reader dlqReader) *cobra.Command {
	return &cobra.Command{
		Use:   "show SEQ",
		Short: "Show one dead letter whole: its headers, the reason, and the event it held",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			seq, err := parseSeq(args[0])
			if err != nil {
				return err
			}
			r, done, err := reader(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			l, err := r.Get(cmd.Context(), seq)
			if err != nil {
				return err
			}
			return writeLetter(cmd.OutOrStdout(), l)
		},
	}
}

func newDLQReplay(reader dlqReader) *cobra.Command {
	var remove bool
	cmd := &cobra.Command{
		Use:   "replay SEQ [SEQ...]",
		Short: "Send dead letters back to the subjects they first came on",
		Long: `replay publishes each letter's message again, with its event headers, to the
subject it first came on (only a subject a stage consumes: an input event, a
dispatch or a result), for its stage to handle anew. Do it once what made the
message fail is fixed. It is handled as any other message: a call whose turn
went on without it is answered as late, and a result whose slot another
result already holds is refused. With --remove, a letter sent back leaves the
dead-letter stream.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var seqs []uint64
			for _, a := range args {
				seq, err := parseSeq(a)
				if err != nil {
					return err
				}
				seqs = append(seqs, seq)
			}
			r, done, err := reader(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			var failed []string
			for _, seq := range seqs {
				l, err := r.Get(cmd.Context(), seq)
				if err == nil {
					var stored uint64
					if stored, err = r.Replay(cmd.Context(), l, remove); err == nil {
						fmt.Fprintf(cmd.OutOrStdout(), "%d\treplayed to %s (stored at %d)\n", seq, l.Original, stored)
						continue
					}
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%d\t%v\n", seq, err)
				failed = append(failed, strconv.FormatUint(seq, 10))
			}
			if len(failed) > 0 {
				return fmt.Errorf("dlq: %d of %d letters not replayed: %s", len(failed), len(seqs), strings.Join(failed, ", "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&remove, "remove", false, "remove each letter once it is sent back")
	return cmd
}

func parseSeq(s string) (uint64, error) {
	seq, err := strconv.ParseUint(s, 10, 64)
	if err != nil || seq == 0 {
		return 0, fmt.Errorf("dlq: %q is not a dead letter's sequence (a positive integer)", s)
	}
	return seq, nil
}

// letterJSON is a letter as JSON: its event decoded when it decodes, else
// its body as text, and why it does not decode.
func letterJSON(l dlq.Letter, withBody bool) map[string]any {
	out := map[string]any{
		"seq": l.Seq, "time": l.Time.UTC().Format(time.RFC3339Nano), "tenant": l.Tenant, "stage": l.Stage,
		"subject": l.Original, "reason": l.Reason,
	}
	if !withBody {
		return out
	}
	headers := map[string]string{}
	for k, v := range l.Header {
		headers[k] = strings.Join(v, ", ")
	}
	out["headers"] = headers
	meta, data, err := schemas.Decode(l.Header, l.Data)
	if err == nil || data != nil {
		out["type"], out["data"] = meta.Type, data
	}
	if err != nil {
		out["decode_error"] = err.Error()
		out["body"] = string(l.Data)
		out["body_bytes"] = len(l.Data)
	}
	return out
}

// writeLetter writes a letter for people: the fields a line each, then the
// headers sorted, then the event.
func writeLetter(w io.Writer, l dlq.Letter) error {
	j := letterJSON(l, true)
	fmt.Fprintf(w, "seq:      %d\ntime:     %s\nstage:    %s/%s\nsubject:  %s\nreason:   %s\n", l.Seq, j["time"], l.Tenant, l.Stage, l.Original, l.Reason)
	keys := make([]string, 0, len(l.Header))
	for k := range l.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintln(w, "headers:")
	for _, k := range keys {
		fmt.Fprintf(w, "  %s: %s\n", k, strings.Join(l.Header[k], ", "))
	}
	if e, ok := j["decode_error"]; ok {
		fmt.Fprintf(w, "does not decode: %s\nbody (%d bytes): %s\n", e, len(l.Data), strconv.Quote(oneLine(string(l.Data), 4096)))
	}
	if d, ok := j["data"]; ok {
		b, err := json.MarshalIndent(map[string]any{"type": j["type"], "data": d}, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "event:\n%s\n", b)
	}
	return nil
}

// oneLine is s on one line, cut to n bytes.
func oneLine(s string, n int) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r", " "), "\n", " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
