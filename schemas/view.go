package schemas

import "time"

// ResultView is a result as an agent reads it: the JSON object `toolwire
// run` prints a line of and the HTTP API sends as an `event: result`. It
// leaves out what only the stages use (batch, context version, the turn's
// count).
type ResultView struct {
	Seq        int    `json:"seq"`
	ToolUseID  string `json:"tool_use_id"`
	Name       string `json:"name"`
	IsError    bool   `json:"is_error"`
	Content    string `json:"content"`
	Truncated  bool   `json:"truncated,omitempty"`
	BlobRef    string `json:"blob_ref,omitempty"`
	StartedAt  string `json:"started_at"`
	FinishedAt string `json:"finished_at"`
	Worker     string `json:"worker"`
	Attempt    int    `json:"attempt"`
}

// ViewOf is r as an agent reads it; times are RFC 3339 in UTC.
func ViewOf(r *ToolResult) ResultView {
	return ResultView{
		Seq: r.Seq, ToolUseID: r.ToolUseID, Name: r.Name, IsError: r.IsError, Content: r.Content,
		Truncated: r.Truncated, BlobRef: r.BlobRef,
		StartedAt: r.StartedAt.UTC().Format(time.RFC3339Nano), FinishedAt: r.FinishedAt.UTC().Format(time.RFC3339Nano),
		Worker: r.Worker, Attempt: r.Attempt,
	}
}
