package builtin

import (
	"bytes"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/toolwire/toolwire/tool"
)

// compileSchema compiles a tool's input schema as the executor's validator
// (draft 2020-12) would.
func compileSchema(t *testing.T, tl *tool.Tool) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tl.InputSchema()))
	if err != nil {
		t.Fatalf("%s schema: %v", tl.Name(), err)
	}
	c := jsonschema.NewCompiler()
	url := "mem://" + tl.Name() + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s schema does not compile: %v", tl.Name(), err)
	}
	return sch
}

func TestInputSchemas(t *testing.T) {
	cases := []struct {
		tool  *tool.Tool
		input string
		valid bool
	}{
		{Bash(), `{"command":"ls"}`, true},
		{Bash(), `{"command":"ls","timeout":600000,"description":"list files"}`, true},
		{Bash(), `{}`, false},
		{Bash(), `{"command":"ls","timeout":600001}`, false},
		{Bash(), `{"command":"ls","timeout":0}`, false},
		{Bash(), `{"command":"ls","timeout":1.5}`, false},
		{Bash(), `{"command":"ls","cwd":"/"}`, false},
		{Read(), `{"file_path":"a.txt"}`, true},
		{Read(), `{"file_path":"a.txt","offset":0,"limit":10}`, true},
		{Read(), `{"file_path":"a.txt","limit":0}`, false},
		{Read(), `{"path":"a.txt"}`, false},
	}
	for _, tc := range cases {
		sch := compileSchema(t, tc.tool)
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(tc.input))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); (err == nil) != tc.valid {
			t.Errorf("%s %s: validation error %v, want valid %v", tc.tool.Name(), tc.input, err, tc.valid)
		}
	}
}

func TestTools(t *testing.T) {
	tools := Tools()
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name())
	}
	if strings.Join(names, ",") != "Bash,Edit,EnterPlanMode,ExitPlanMode,Glob,Grep,Read,Write" {
		t.Fatalf("Tools() = %v, want Bash, Edit, EnterPlanMode, ExitPlanMode, Glob, Grep, Read, Write", names)
	}
	if _, err := tool.NewRegistry(tools...); err != nil {
		t.Fatal(err)
	}
}
