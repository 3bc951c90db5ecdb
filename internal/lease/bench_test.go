package lease_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/schemas"
)

// BenchmarkUpdate is one turn's lease written over and over by one
// process, as a call's claim and done are: on the cached lease (the
// compare-and-set goes at once), and with the cache dropped before each
// update (a read first, as every update did before the cache), side by
// side in one run.
func BenchmarkUpdate(b *testing.B) {
	for _, cached := range []bool{true, false} {
		b.Run(fmt.Sprintf("cached=%v", cached), func(b *testing.B) {
			srv := testenv.Server(b)
			js, err := jetstream.New(testenv.Conn(b, srv, "bench"))
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			if err := provision.Streams(ctx, js, space, provision.Config{}); err != nil {
				b.Fatal(err)
			}
			st, err := lease.NewStore(ctx, js, space, 0)
			if err != nil {
				b.Fatal(err)
			}
			bump := func(l *schemas.Lease) error { l.Chars++; return nil }
			if _, _, err := st.Update(ctx, tenant, "bench", freshLease, bump); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if !cached {
					st.Forget(tenant, "bench")
				}
				if _, _, err := st.Update(ctx, tenant, "bench", nil, bump); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
