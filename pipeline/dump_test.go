package pipeline_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
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

// dumpLease logs a turn's lease, to diagnose a turn that did not complete.
func dumpLease(t *testing.T, srv *embedded.Server, turn string) {
	js, _ := jetstream.New(testenv.Conn(t, srv, "dump"))
	sp := subjects.Default()
	kv, err := js.KeyValue(context.Background(), sp.LeaseBucket())
	if err != nil {
		t.Log(err)
		return
	}
	e, err := kv.Get(context.Background(), sp.LeaseKey(subjects.DefaultTenant, turn))
	if err != nil {
		t.Logf("lease of %s: %v", turn, err)
		return
	}
	l, err := schemas.DecodeLease(e.Value())
	t.Logf("lease of %s: %+v (err %v)", turn, l, err)
}
