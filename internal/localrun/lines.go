package localrun

import (
	"encoding/json"
	"io"
	"time"

	"github.com/toolwire/toolwire/schemas"
)

// ResultLine is one line of `toolwire run` output: a result as delivered.
type ResultLine = schemas.ResultView

// DoneLine is the last line of `toolwire run` output.
type DoneLine struct {
	TurnDone        bool   `json:"turn_done"`
	Calls           int    `json:"calls"`
	StreamStartedAt string `json:"stream_started_at"`
	StreamEndedAt   string `json:"stream_ended_at"`
	StopReason      string `json:"stop_reason,omitempty"`
	StreamError     string `json:"stream_error,omitempty"`
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// WriteResult writes a result as one JSON line.
func WriteResult(w io.Writer, r *schemas.ToolResult) error {
	return encoder(w).Encode(schemas.ViewOf(r))
}

// WriteDone writes the turn's closing JSON line.
func WriteDone(w io.Writer, rep *Report) error {
	calls := 0
	if rep.Done != nil {
		calls = rep.Done.Results
	}
	return encoder(w).Encode(DoneLine{
		TurnDone: rep.Done != nil, Calls: calls,
		StreamStartedAt: stamp(rep.Stream.StartedAt), StreamEndedAt: stamp(rep.Stream.EndedAt),
		StopReason: rep.Stream.StopReason, StreamError: rep.Stream.Err,
	})
}

// ProgressLine is a progress line of `toolwire run --progress`.
type ProgressLine struct {
	Progress bool   `json:"progress"`
	Seq      int    `json:"seq"`
	Text     string `json:"text"`
	At       string `json:"at"`
}

// WriteProgress writes a progress event as one JSON line.
func WriteProgress(w io.Writer, p *schemas.ToolProgress) error {
	return encoder(w).Encode(ProgressLine{Progress: true, Seq: p.Seq, Text: p.Text, At: stamp(time.Now())})
}

// encoder writes JSON lines as people and scripts read them: no HTML
// escaping of <, > and &, which tool output is full of.
func encoder(w io.Writer) *json.Encoder {
	e := json.NewEncoder(w)
	e.SetEscapeHTML(false)
	return e
}
