package pipeline_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/reorder"
	"github.com/toolwire/toolwire/router"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/testtools"
)

// TestZeroSpaceRefused: a configuration that leaves its Space unset gets an
// error saying so from every constructor, not a crash or streams named
// "_IN".
func TestZeroSpaceRefused(t *testing.T) {
	srv := testenv.Server(t)
	nc := testenv.Conn(t, srv, "zero-space")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reg := testenv.Registry(t, testtools.Tools()...)
	_, err := pipeline.Start(ctx, srv.Connect, pipeline.Config{Tools: reg})
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, subjects.ErrZeroSpace) {
			t.Errorf("%s: err = %v, want ErrZeroSpace", what, err)
		}
	}
	check("pipeline.Start", err)
	check("pipeline.Provision", pipeline.Provision(ctx, nc, subjects.Space{}))
	_, err = router.New(ctx, nc, router.Config{Tools: reg})
	check("router.New", err)
	_, err = executor.New(ctx, nc, executor.Config{Tools: reg})
	check("executor.New", err)
	_, err = reorder.New(ctx, nc, reorder.Config{})
	check("reorder.New", err)
	_, err = client.New(nc, client.Config{})
	check("client.New", err)
}
