package testtools_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/testtools"
)

// The test tools do what their input says, so a test can build turns of
// safe and unsafe, fast and slow, failing and succeeding calls without
// touching the machine.
func Example() {
	for _, t := range testtools.Tools() {
		fmt.Println(t.Name())
	}
	sleep := testtools.Sleep()
	fmt.Println(sleep.IsConcurrencySafe(json.RawMessage(`{"ms":10,"safe":true}`)), sleep.IsConcurrencySafe(json.RawMessage(`{"ms":10}`)))

	res, err := testtools.Noop().Call(context.Background(), json.RawMessage(`{"echo":1}`), tool.TurnContext{}, nil)
	fmt.Println(res.Content, err)
	res, err = sleep.Call(context.Background(), json.RawMessage(`{"ms":1,"fail":true}`), tool.TurnContext{}, nil)
	fmt.Println(res.IsError, err)
	// Output:
	// Chdir
	// Noop
	// Sleep
	// true false
	// {"echo":1} <nil>
	// true <nil>
}
