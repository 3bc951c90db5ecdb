package executor_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/testtools"
)

// TestSharedOnAnotherConnRefused: a worker given a Shared made on another
// connection is refused with a reason, not run with a cache it cannot
// trust.
func TestSharedOnAnotherConnRefused(t *testing.T) {
	srv := testenv.Server(t)
	// The pipeline provisions the streams and the lease bucket.
	startPipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...), Executors: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sh, err := executor.NewShared(ctx, testenv.Conn(t, srv, "shared"), subjects.Default(), 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = executor.New(ctx, testenv.Conn(t, srv, "worker"), executor.Config{Space: subjects.Default(), Tools: testenv.Registry(t, testtools.Tools()...), Shared: sh, NoAdvertise: true})
	if err == nil || !strings.Contains(err.Error(), "another connection") {
		t.Fatalf("New with a Shared of another connection: %v", err)
	}
	if errors.Unwrap(err) == nil {
		t.Errorf("the refusal wraps nothing: %v", err)
	}
}
