package pipeline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/testtools"
)

// TestAlive: a pipeline is alive while its stages run; once they stopped
// (a drain under way, or a stage that failed and took the others with
// it), Alive names them.
func TestAlive(t *testing.T) {
	srv := testenv.Server(t)
	p, err := pipeline.Start(context.Background(), srv.Connect, pipeline.Config{Space: subjects.Default(), Tools: testenv.Registry(t, testtools.Tools()...), Executors: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Alive(); err != nil {
		t.Fatalf("alive after Start: %v", err)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	err = p.Alive()
	if err == nil {
		t.Fatal("alive after Stop")
	}
	for _, name := range append([]string{"router 0", "reorder 0"}, p.Workers...) {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("Alive after Stop: %v; want %s named", err, name)
		}
	}
}
