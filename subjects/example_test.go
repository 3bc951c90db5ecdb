package subjects_test

import (
	"fmt"

	"github.com/toolwire/toolwire/subjects"
)

// The subjects and message ids of one turn with two calls, as a producer
// in another language must use them: tool_use and turn_end go to the
// turn's input subjects, each with its Nats-Msg-Id so that a retried
// publish is dropped, and the agent reads the turn's out subject.
func Example() {
	sp := subjects.Default() // prefix "tw"; subjects.New("acme") for another
	tenant, turn := subjects.DefaultTenant, "turn-42"

	fmt.Println("stream", sp.InStream())
	for seq := range 2 {
		fmt.Println("tool_use", sp.In(tenant, turn, subjects.KindUse), subjects.UseMsgID(tenant, turn, seq))
	}
	fmt.Println("turn_end", sp.In(tenant, turn, subjects.KindEnd), subjects.InMsgID(tenant, turn, subjects.KindEnd))
	fmt.Println("cancel", sp.In(tenant, turn, subjects.KindCancel))
	fmt.Println("results", sp.Out(tenant, turn), "in", sp.OutStream())
	fmt.Println("progress", sp.Progress(tenant, turn))

	p, err := sp.ParseIn("tw.default.in.turn-42.use")
	fmt.Println(p.Tenant, p.Turn, p.Kind, err)

	fmt.Println(subjects.CheckToken("turn", "turn 42"))
	// Output:
	// stream TW_IN
	// tool_use tw.default.in.turn-42.use default/turn-42/0/use
	// tool_use tw.default.in.turn-42.use default/turn-42/1/use
	// turn_end tw.default.in.turn-42.end default/turn-42/end
	// cancel tw.default.in.turn-42.cancel
	// results tw.default.out.turn-42 in TW_OUT
	// progress tw.default.progress.turn-42
	// default turn-42 use <nil>
	// subjects: invalid token: turn "turn 42" has ' ' at byte 4 (allowed: letters, digits, '-', '_')
}
