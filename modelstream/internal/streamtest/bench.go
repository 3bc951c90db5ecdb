package streamtest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/modelstream"
)

// BenchParse benchmarks p over data, with a Handler that fails on an
// incomplete call; it fails if no call was parsed.
func BenchParse(b *testing.B, p modelstream.Parser, data []byte) {
	b.Helper()
	var calls int
	h := modelstream.HandlerFuncs{
		OnCall: func(_ context.Context, c modelstream.Call) error {
			if !c.Complete {
				return fmt.Errorf("call %d incomplete: %s", c.Seq, c.Err)
			}
			calls++
			return nil
		},
	}
	ctx := context.Background()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Parse(ctx, bytes.NewReader(data), h); err != nil {
			b.Fatal(err)
		}
	}
	if calls == 0 {
		b.Fatal("no calls parsed")
	}
}

// BenchFixtures benchmarks a new parser over each fixture in dir, named by
// file(fx), one sub-benchmark each named without trimPrefix: the
// per-stream overhead next to BenchParse's bulk figure.
func BenchFixtures[F any](b *testing.B, newParser func() modelstream.Parser, dir, trimPrefix string, fixtures []F, file func(F) string) {
	b.Helper()
	for _, fx := range fixtures {
		name := file(fx)
		b.Run(strings.TrimPrefix(name, trimPrefix), func(b *testing.B) {
			data := LoadFixture(b, dir, name)
			h := modelstream.HandlerFuncs{}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := newParser().Parse(context.Background(), bytes.NewReader(data), h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// CheckBenchStream keeps a benchmark honest: res must hold calls calls,
// all complete.
func CheckBenchStream(t testing.TB, res *Result, calls int) {
	t.Helper()
	if len(res.Calls) != calls {
		t.Fatalf("got %d calls, want %d", len(res.Calls), calls)
	}
	for _, c := range res.Calls {
		if !c.Complete {
			t.Fatalf("call %d incomplete: %s", c.Seq, c.Err)
		}
	}
}
