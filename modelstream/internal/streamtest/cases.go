package streamtest

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// WantCall is an expected call of a Case. At is the position in the case's
// event list of the event that completes or ends it, -1 for the end of the
// input. ErrHas must be contained in the call's Err; "" wants no error.
type WantCall struct {
	// ID "" wants a synthesized ID, checked by CaseOpts.SynthID.
	ID, Name   string
	Input, Raw string
	Complete   bool
	ErrHas     string
	At         int
	// Ended wants the call's block ended with text that did not parse.
	Ended bool
}

// Case is a synthetic stream and what a parser must report of it.
type Case struct {
	Name   string
	Events []string
	Calls  []WantCall
	Stop   string
	// EndErr must be contained in End.Err; "" wants no error. In it and in
	// WantCall.ErrHas, {len} is replaced by the input length, {N} by the end
	// of event N.
	EndErr string
	// Warnings is End.Warnings; Warning must be contained in End.Warning,
	// expanded as EndErr is.
	Warnings int
	Warning  string
}

// CaseOpts holds what a format adds to RunCases.
type CaseOpts struct {
	// SynthID reports whether id is a good synthesized ID for call i, when
	// the case wants ID "". Nil: IDs are compared as they are.
	SynthID func(i int, id string) bool
}

// RunCases runs each case as a subtest: it frames the events, feeds them to
// parse whole and one byte at a time, and compares the calls and the End
// with what the case wants.
func RunCases(t *testing.T, parse func(testing.TB, io.Reader) *Result, frame func([]string) ([]byte, []int64), cases []Case, opts CaseOpts) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			data, ends := frame(tt.Events)
			expand := func(s string) string {
				s = strings.ReplaceAll(s, "{len}", strconv.Itoa(len(data)))
				for i := len(ends) - 1; i >= 0; i-- {
					s = strings.ReplaceAll(s, "{"+strconv.Itoa(i)+"}", strconv.FormatInt(ends[i], 10))
				}
				return s
			}
			for _, feed := range []struct {
				name string
				r    io.Reader
			}{
				{"whole", bytes.NewReader(data)},
				{"one byte", iotest.OneByteReader(bytes.NewReader(data))},
			} {
				res := parse(t, feed.r)
				if len(res.Calls) != len(tt.Calls) {
					t.Fatalf("%s: got %d calls, want %d: %+v", feed.name, len(res.Calls), len(tt.Calls), res.Calls)
				}
				for i, w := range tt.Calls {
					c := res.Calls[i]
					wantAt := int64(len(data))
					if w.At >= 0 {
						wantAt = ends[w.At]
					}
					var wantInput json.RawMessage
					if w.Complete {
						wantInput = json.RawMessage(w.Input)
					}
					wantID := w.ID
					if wantID == "" && opts.SynthID != nil {
						wantID = c.ID // synthesized; checked here by SynthID
						if !opts.SynthID(i, c.ID) {
							t.Errorf("%s: call %d ID %q, want a synthesized one", feed.name, i, c.ID)
						}
					}
					if c.ID != wantID || c.Name != w.Name || c.RawInput != w.Raw || c.Complete != w.Complete ||
						!bytes.Equal(c.Input, wantInput) || c.At != wantAt || c.Ended != w.Ended {
						t.Errorf("%s: call %d = %+v (Input %s)\nwant ID %q Name %q RawInput %q Complete %v Input %s At %d Ended %v",
							feed.name, i, c, c.Input, wantID, w.Name, w.Raw, w.Complete, wantInput, wantAt, w.Ended)
					}
					errHas := expand(w.ErrHas)
					if (errHas == "") != (c.Err == "") || !strings.Contains(c.Err, errHas) {
						t.Errorf("%s: call %d Err = %q, want it to contain %q", feed.name, i, c.Err, errHas)
					}
				}
				end := res.Ends[0]
				if end.StopReason != tt.Stop {
					t.Errorf("%s: StopReason = %q, want %q", feed.name, end.StopReason, tt.Stop)
				}
				endErr := expand(tt.EndErr)
				if (endErr == "") != (end.Err == "") || !strings.Contains(end.Err, endErr) {
					t.Errorf("%s: End.Err = %q, want it to contain %q", feed.name, end.Err, endErr)
				}
				warning := expand(tt.Warning)
				if end.Warnings != tt.Warnings || (warning == "") != (end.Warning == "") || !strings.Contains(end.Warning, warning) {
					t.Errorf("%s: End has %d warnings, the first %q; want %d, the first containing %q",
						feed.name, end.Warnings, end.Warning, tt.Warnings, warning)
				}
			}
		})
	}
}
