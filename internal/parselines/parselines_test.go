package parselines_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/parselines"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/modelstream/formats"
)

func TestPrint(t *testing.T) {
	parser, err := formats.Parser("anthropic")
	if err != nil {
		t.Fatal(err)
	}
	stream := testenv.AnthropicStream("msg_1", testenv.ToolBlock{ID: "toolu_1", Name: "Bash", Args: `{"command":"ls <dir>"}`})
	var out bytes.Buffer
	failure, err := parselines.Print(context.Background(), &out, parser, strings.NewReader(stream), func(off int64) int64 { return -off })
	if err != nil || failure != "" {
		t.Fatalf("failure %q, err %v", failure, err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines:\n%s", len(lines), out.String())
	}
	if !strings.HasPrefix(lines[0], `{"seq":0,"id":"toolu_1","name":"Bash","input":{"command":"ls <dir>"},"complete":true,"at":-`) {
		t.Errorf("call line %s", lines[0])
	}
	if lines[1] != `{"end":true,"calls":1,"stop_reason":"tool_use","error":null,"warnings":0}` {
		t.Errorf("end line %s", lines[1])
	}

	// A stream cut short is printed to its end, and its failure returned.
	out.Reset()
	failure, err = parselines.Print(context.Background(), &out, parser, strings.NewReader(stream[:len(stream)/2]), nil)
	if err != nil || failure == "" || !strings.Contains(out.String(), `"end":true`) || !strings.Contains(out.String(), failure) {
		t.Errorf("cut stream: failure %q, err %v, output:\n%s", failure, err, out.String())
	}
}
