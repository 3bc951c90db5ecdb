package localrun

import (
	"context"
	"io"

	"github.com/toolwire/toolwire/modelstream"
)

// holdCalls wraps a parser so that its calls reach the handler only at the
// stream's end, all together just before the end itself: what an executor
// that waits for the end of the stream sees (Options.WaitForEnd).
func holdCalls(p modelstream.Parser) modelstream.Parser { return holding{p} }

type holding struct{ p modelstream.Parser }

func (h holding) Parse(ctx context.Context, r io.Reader, next modelstream.Handler) error {
	var held []modelstream.Call
	return h.p.Parse(ctx, r, modelstream.HandlerFuncs{
		OnCall: func(_ context.Context, c modelstream.Call) error {
			held = append(held, c)
			return nil
		},
		OnEnd: func(ctx context.Context, e modelstream.End) error {
			for _, c := range held {
				if err := next.Call(ctx, c); err != nil {
					return err
				}
			}
			return next.End(ctx, e)
		},
	})
}
