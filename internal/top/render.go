package top

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Render writes s as text for a terminal or a log: plain columns, no
// color, a line per turn, worker and consumer.
func Render(w io.Writer, where string, s *Snapshot) error {
	var b strings.Builder
	fmt.Fprintf(&b, "toolwire top  %s  %s\n", where, s.At.Format("2006-01-02 15:04:05 UTC"))
	fmt.Fprintf(&b, "turns: %d in flight, %d finished   calls in flight: %d waiting, %d running, %d done   dead letters: %d   approvals waiting: %d\n\n",
		s.TurnsInFlight, s.TurnsFinished, s.Calls.Waiting, s.Calls.Running, s.Calls.Done, s.DeadLetters, s.ApprovalsWaiting)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TENANT\tTURN\tCALLS\tWAITING\tRUNNING\tDONE\tSTATE\tAGE")
	for _, t := range s.Turns {
		total := "?"
		if t.Total >= 0 {
			total = fmt.Sprint(t.Total)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", t.Tenant, t.Turn, total, t.Waiting, t.Running, t.Done, state(t), age(t.AgeMs))
	}
	if s.TurnsLeftOut > 0 {
		fmt.Fprintf(tw, "…\t%d more\t\t\t\t\t\t\n", s.TurnsLeftOut)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "WORKER\tTOOL\tRUNNING")
	for _, r := range s.Running {
		fmt.Fprintf(tw, "%s\t%s\t%d\n", r.Worker, r.Tool, r.Calls)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "STAGE\tCONSUMER\tLAG\tACK PENDING\tREDELIVERED\tWAITING PULLS")
	for _, c := range s.Consumers {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\n", c.Stage, c.Consumer, c.Pending, c.AckPending, c.Redelivered, c.Waiting)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func state(t Turn) string {
	var s string
	switch {
	case t.Finished:
		s = "finished"
	case t.Total < 0:
		s = "streaming"
	default:
		s = "running"
	}
	for _, f := range []struct {
		on   bool
		name string
	}{{t.Cancelled, "cancelled"}, {t.Discarded, "discarded"}, {t.Aborted, "aborted"}} {
		if f.on {
			s += "," + f.name
		}
	}
	return s
}

func age(ms int64) string {
	if ms <= 0 {
		return "-"
	}
	return (time.Duration(ms) * time.Millisecond).Round(100 * time.Millisecond).String()
}
