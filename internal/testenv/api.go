package testenv

import (
	"context"
	"testing"

	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/httpapi"
	"github.com/toolwire/toolwire/subjects"
)

// API serves the HTTP API over srv on a loopback port until the test's
// end and returns its base URL; cfg's Conn and a zero Space are filled in.
func API(t testing.TB, srv *embedded.Server, cfg httpapi.Config) string {
	t.Helper()
	cfg.Conn = Conn(t, srv, "api")
	if cfg.Space == (subjects.Space{}) {
		cfg.Space = subjects.Default()
	}
	api, err := httpapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := httpapi.Listen("127.0.0.1:0", api)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close(context.Background()) })
	return "http://" + ln.Addr()
}
