package pipeline_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/internal/testenv"
)

// dumpStreams logs the out and result streams, to diagnose a failed test.
func dumpStreams(t *testing.T, srv *embedded.Server) {
	js, _ := jetstream.New(testenv.Conn(t, srv, "dump"))
	for _, name := range []string{"TW_OUT", "TW_RESULT"} {
		s, err := js.Stream(context.Background(), name)
		if err != nil {
			t.Log(err)
			continue
		}
		for seq := uint64(1); seq < 20; seq++ {
			m, err := s.GetMsg(context.Background(), seq)
			if err != nil {
				break
			}
			t.Logf("%s %d %s seq=%s type=%s", name, seq, m.Subject, m.Header.Get("ce-seq"), m.Header.Get("ce-type"))
		}
	}
}
