package executor_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/tool/builtin"
)

// TestOutputCutBeforeShaping: a command writes 20,000,000 bytes, more than
// Bash holds in memory. The preview states the real size and that the
// stored copy holds only its start, and how much; the stored copy is that.
func TestOutputCutBeforeShaping(t *testing.T) {
	srv := testenv.Server(t)
	dir := t.TempDir()
	startPipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, builtin.Bash()), WorkDir: dir})
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, _ := json.Marshal(map[string]string{"command": `head -c 20000000 /dev/zero | tr '\0' a`})
	if err := cl.SubmitCalls(ctx, "t_cut", []client.Call{{ID: "big", Name: "Bash", Input: cmd}}, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	results, _, err := readTurn(ctx, cl, "t_cut")
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	if r.IsError || !r.Truncated || r.BlobRef == "" {
		t.Fatalf("result: error %v, truncated %v, blob %q: %.300q", r.IsError, r.Truncated, r.BlobRef, r.Content)
	}
	const kept = 1 << 20 // what Bash keeps of its output
	if !strings.HasPrefix(r.Content, strings.Repeat("a", 1000)) || len(r.Content) > 3000 {
		t.Errorf("preview of %d bytes: %.100q…", len(r.Content), r.Content)
	}
	for _, want := range []string{"20000000 bytes of output", "the stored copy holds only the first 1048576 bytes", r.BlobRef} {
		if !strings.Contains(r.Content, want) {
			t.Errorf("preview does not say %q: …%q", want, r.Content[max(0, len(r.Content)-300):])
		}
	}
	if strings.Contains(r.Content, "8388652") {
		t.Errorf("preview counts the capture with its marker as the output: …%q", r.Content[max(0, len(r.Content)-300):])
	}
	blob, err := cl.Blob(ctx, r.BlobRef)
	if err != nil {
		t.Fatal(err)
	}
	if len(blob) < kept || strings.Count(string(blob[:kept]), "a") != kept {
		t.Errorf("stored copy of %d bytes does not begin with the %d bytes kept", len(blob), kept)
	}
}
