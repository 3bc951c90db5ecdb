package formats_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/formats"
)

// A program that takes the stream format as a flag or a configuration
// field, as `toolwire run --format` does, picks its parser by name; an
// unknown name is an error that wraps ErrUnknown.
func Example() {
	fmt.Println(strings.Join(formats.Names(), " "))

	if _, err := formats.Parser("openai"); err != nil {
		fmt.Println(err)
	}

	p, err := formats.Parser("hermes")
	if err != nil {
		fmt.Println(err)
		return
	}
	h := modelstream.HandlerFuncs{OnCall: func(_ context.Context, c modelstream.Call) error {
		fmt.Println(c.Name, string(c.Input))
		return nil
	}}
	text := `<tool_call>{"name":"Glob","arguments":{"pattern":"*.go"}}</tool_call>`
	if err := p.Parse(context.Background(), strings.NewReader(text), h); err != nil {
		fmt.Println(err)
	}
	// Output:
	// anthropic gemini hermes openai-chat openai-responses
	// formats: unknown stream format "openai" (known: anthropic, gemini, hermes, openai-chat, openai-responses)
	// Glob {"pattern":"*.go"}
}
