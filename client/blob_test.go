package client_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/tool"
)

// TestBlob: a result over its tool's cap reaches the model as a preview
// naming a blob; Blob reads back the whole content.
func TestBlob(t *testing.T) {
	_, cl := env(t, pipeline.Config{})
	ctx := testCtx(t)
	// Noop answers with its input: one over the default cap, yet well
	// within the server's max_payload.
	input := `{"pad":"` + strings.Repeat("x", tool.DefaultMaxResultChars+10_000) + `"}`
	if err := cl.SubmitCalls(ctx, "blob", []client.Call{noop("a", input)}, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	results, _ := readTurn(t, ctx, cl, "blob")
	r := results[0]
	if r.IsError || !r.Truncated || r.BlobRef == "" || !strings.Contains(r.Content, r.BlobRef) || len(r.Content) >= len(input) {
		t.Fatalf("result: error %v, truncated %v, blob %q, %d bytes", r.IsError, r.Truncated, r.BlobRef, len(r.Content))
	}
	b, err := cl.Blob(ctx, r.BlobRef)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != input {
		t.Errorf("blob of %d bytes, want the %d of the result", len(b), len(input))
	}
}

// TestBlobMissing: a ref that names nothing, or no ref at all, is an error
// that says which.
func TestBlobMissing(t *testing.T) {
	_, cl := env(t, pipeline.Config{Routers: -1, Executors: -1, Reorders: -1})
	ctx := testCtx(t)
	if _, err := cl.Blob(ctx, "default/none/0"); !errors.Is(err, jetstream.ErrObjectNotFound) || !strings.Contains(err.Error(), "default/none/0") {
		t.Errorf("Blob of a missing ref: %v", err)
	}
	if _, err := cl.Blob(ctx, ""); err == nil || !strings.Contains(err.Error(), "ref is empty") {
		t.Errorf("Blob of no ref: %v", err)
	}
}
