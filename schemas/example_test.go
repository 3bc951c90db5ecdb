package schemas_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// An event is one NATS message: the CloudEvents attributes travel as ce-*
// headers, the data as the body (msgpack unless ContentType says JSON).
// The call's input is carried as JSON text, so a number no float64 can hold
// comes back with every digit.
func Example() {
	meta := schemas.Meta{
		ID:     "evt-1", // empty: a fresh NUID
		Source: "/my-agent/adapter",
		Time:   time.Date(2026, 11, 30, 7, 21, 29, 0, time.UTC), // zero: now
		Tenant: subjects.DefaultTenant,
		Turn:   "turn-1",
		Seq:    0,
	}
	use := &schemas.ToolUse{
		Seq:       0,
		ToolUseID: "toolu_01",
		Name:      "Read",
		Input:     schemas.RawJSON(`{"file_path":"big.csv","offset":9007199254740993}`),
		Complete:  true,
	}
	h, body, err := schemas.Encode(meta, use)
	if err != nil {
		fmt.Println(err)
		return
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Printf("%s: %s\n", k, h.Get(k))
	}

	m, data, err := schemas.Decode(h, body)
	if err != nil {
		fmt.Println(err)
		return
	}
	got := data.(*schemas.ToolUse)
	fmt.Println(m.Type, m.Turn, m.Seq, got.Name, string(got.Input))
	// Output:
	// ce-datacontenttype: application/msgpack
	// ce-id: evt-1
	// ce-seq: 0
	// ce-source: /my-agent/adapter
	// ce-specversion: 1.0
	// ce-tenant: default
	// ce-time: 2026-11-30T07:21:29Z
	// ce-turn: turn-1
	// ce-type: dev.toolwire.tool_use.v1
	// dev.toolwire.tool_use.v1 turn-1 0 Read {"file_path":"big.csv","offset":9007199254740993}
}

// Decode names the field at fault, by its wire name, in a *FieldError: a
// producer in another language learns exactly what to fix.
func ExampleDecode() {
	h, body, _ := schemas.Encode(schemas.Meta{Source: "/my-agent", Turn: "turn-1", Seq: 0, ContentType: schemas.ContentJSON},
		&schemas.ToolUse{Seq: 0, ToolUseID: "toolu_01", Name: "Read", Input: schemas.RawJSON(`{}`), Complete: true})
	fmt.Println(string(body))

	broken := strings.Replace(string(body), `"tool_use_id":"toolu_01",`, "", 1)
	_, _, err := schemas.Decode(h, []byte(broken))
	fmt.Println(err)
	// Output:
	// {"seq":0,"tool_use_id":"toolu_01","name":"Read","input":{},"complete":true}
	// schemas: field tool_use_id: required
}

// The JSON Schema files in schemas/jsonschema are the contract for
// producers and consumers in other languages; Go code reads the same files
// through JSONSchema.
func ExampleJSONSchema() {
	for _, t := range schemas.EventTypes() {
		b, ok := schemas.JSONSchema(t)
		if !ok {
			continue
		}
		var s struct {
			ID string `json:"$id"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			fmt.Println(t, err)
			continue
		}
		fmt.Println(t, s.ID)
	}
	_, ok := schemas.JSONSchema("dev.toolwire.tool_use.v2")
	fmt.Println("v2:", ok)
	// Output:
	// dev.toolwire.approval_decision.v1 https://toolwire.dev/schemas/approval_decision.v1.json
	// dev.toolwire.approval_request.v1 https://toolwire.dev/schemas/approval_request.v1.json
	// dev.toolwire.dispatch.v1 https://toolwire.dev/schemas/dispatch.v1.json
	// dev.toolwire.tool_progress.v1 https://toolwire.dev/schemas/tool_progress.v1.json
	// dev.toolwire.tool_result.v1 https://toolwire.dev/schemas/tool_result.v1.json
	// dev.toolwire.tool_use.v1 https://toolwire.dev/schemas/tool_use.v1.json
	// dev.toolwire.turn_cancel.v1 https://toolwire.dev/schemas/turn_cancel.v1.json
	// dev.toolwire.turn_discard.v1 https://toolwire.dev/schemas/turn_discard.v1.json
	// dev.toolwire.turn_done.v1 https://toolwire.dev/schemas/turn_done.v1.json
	// dev.toolwire.turn_end.v1 https://toolwire.dev/schemas/turn_end.v1.json
	// v2: false
}
