package modelstream

import "context"

// HandlerFuncs adapts a pair of functions to Handler; a nil function ignores its reports.
type HandlerFuncs struct {
	OnCall func(ctx context.Context, c Call) error
	OnEnd  func(ctx context.Context, e End) error
}

var _ Handler = HandlerFuncs{}

// Call calls f.OnCall if it is set.
func (f HandlerFuncs) Call(ctx context.Context, c Call) error {
	if f.OnCall == nil {
		return nil
	}
	return f.OnCall(ctx, c)
}

// End calls f.OnEnd if it is set.
func (f HandlerFuncs) End(ctx context.Context, e End) error {
	if f.OnEnd == nil {
		return nil
	}
	return f.OnEnd(ctx, e)
}
