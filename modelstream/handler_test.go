package modelstream_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toolwire/toolwire/modelstream"
)

func TestHandlerFuncs(t *testing.T) {
	ctx := context.Background()

	var zero modelstream.HandlerFuncs
	if err := zero.Call(ctx, modelstream.Call{}); err != nil {
		t.Errorf("nil OnCall: got %v, want nil", err)
	}
	if err := zero.End(ctx, modelstream.End{}); err != nil {
		t.Errorf("nil OnEnd: got %v, want nil", err)
	}

	errStop := errors.New("stop")
	var gotCall modelstream.Call
	var gotEnd modelstream.End
	h := modelstream.HandlerFuncs{
		OnCall: func(_ context.Context, c modelstream.Call) error { gotCall = c; return errStop },
		OnEnd:  func(_ context.Context, e modelstream.End) error { gotEnd = e; return nil },
	}
	if err := h.Call(ctx, modelstream.Call{Seq: 3, Name: "x"}); !errors.Is(err, errStop) {
		t.Errorf("Call error = %v, want %v", err, errStop)
	}
	if gotCall.Seq != 3 || gotCall.Name != "x" {
		t.Errorf("OnCall got %+v", gotCall)
	}
	if err := h.End(ctx, modelstream.End{Calls: 2, StopReason: "tool_use"}); err != nil {
		t.Errorf("End error = %v", err)
	}
	if gotEnd.Calls != 2 || gotEnd.StopReason != "tool_use" {
		t.Errorf("OnEnd got %+v", gotEnd)
	}
}
