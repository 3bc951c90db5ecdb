package tool_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

func builtinT(name string, aliases ...string) *tool.Tool {
	return tool.MustBuild(tool.Definition{Name: name, Aliases: aliases, Description: name + " tool.", Call: call,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)})
}

func mcpT(server, name, desc string) *tool.Tool {
	return tool.MustBuild(tool.Definition{Name: "mcp__" + server + "__" + name, Description: desc, Call: call,
		Origin: tool.Origin{Kind: tool.OriginMCP, Server: server}})
}

func poolNames(pool []*tool.Tool) []string {
	out := make([]string, len(pool))
	for i, t := range pool {
		out[i] = t.Name()
	}
	return out
}

// permutations calls f with every order of the indexes 0..n-1.
func permutations(n int, f func([]int)) {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			f(slices.Clone(p))
			return
		}
		for i := k; i < n; i++ {
			p[k], p[i] = p[i], p[k]
			rec(k + 1)
			p[k], p[i] = p[i], p[k]
		}
	}
	rec(0)
}

// The built-ins and two MCP servers registered in every order (the three
// sources in all 6 orders, each source's own tools in all their orders)
// give the same pool and the same bytes in both formats.
func TestAssembleEveryRegistrationOrder(t *testing.T) {
	builtins := []*tool.Tool{builtinT("Read"), builtinT("Bash"), builtinT("Grep")}
	github := []*tool.Tool{mcpT("github", "list_issues", "List issues."), mcpT("github", "create_issue", "Create an issue.")}
	slack := []*tool.Tool{mcpT("slack", "send_message", "Send a <message> & more."), mcpT("slack", "add_reaction", "React.")}
	sources := [][]*tool.Tool{builtins, github, slack}

	want := []string{"Bash", "Grep", "Read", "mcp__github__create_issue", "mcp__github__list_issues", "mcp__slack__add_reaction", "mcp__slack__send_message"}
	var first map[tool.Format][]byte
	runs := 0
	permutations(3, func(order []int) {
		// each source's tools in every order too
		permutations(3, func(pb []int) {
			permutations(2, func(pg []int) {
				permutations(2, func(ps []int) {
					inner := [][]int{pb, pg, ps}
					var bs, ext []*tool.Tool
					for _, src := range order {
						for _, i := range inner[src] {
							if src == 0 {
								bs = append(bs, sources[src][i])
							} else {
								ext = append(ext, sources[src][i])
							}
						}
					}
					pool := tool.Assemble(bs, ext, nil)
					if got := poolNames(pool); !slices.Equal(got, want) {
						t.Fatalf("order %v %v: pool %v, want %v", order, inner, got, want)
					}
					out := map[tool.Format][]byte{}
					for _, f := range []tool.Format{tool.FormatAnthropic, tool.FormatOpenAI} {
						b, err := tool.Render(f, tool.Entries(pool))
						if err != nil {
							t.Fatal(err)
						}
						out[f] = b
					}
					if first == nil {
						first = out
					}
					for f, b := range out {
						if !bytes.Equal(b, first[f]) {
							t.Fatalf("order %v %v: %s bytes differ:\n%s\nvs\n%s", order, inner, f, b, first[f])
						}
					}
					runs++
				})
			})
		})
	})
	if runs != 6*6*2*2 {
		t.Fatalf("%d orders tried", runs)
	}
	if !bytes.Contains(first[tool.FormatAnthropic], []byte(`"Send a <message> & more."`)) {
		t.Error("descriptions must not be HTML-escaped")
	}
}

// Adding a server appends to the list: the built-in block stays the same
// prefix.
func TestAssembleAppendsExternals(t *testing.T) {
	bs := []*tool.Tool{builtinT("Read"), builtinT("Bash")}
	a := poolNames(tool.Assemble(bs, nil, nil))
	b := poolNames(tool.Assemble(bs, []*tool.Tool{mcpT("aaa", "x", "")}, nil))
	if !slices.Equal(b[:len(a)], a) || b[len(a)] != "mcp__aaa__x" {
		t.Errorf("externals were merged, not appended: %v then %v", a, b)
	}
}

// An external tool named like a built-in is dropped, the built-in kept,
// whatever the order; so is a second external of the same name.
func TestAssembleDuplicates(t *testing.T) {
	read := builtinT("Read")
	remoteRead := tool.MustBuild(tool.Definition{Name: "Read", Description: "remote", Call: call, Origin: tool.Origin{Kind: tool.OriginRemote, Server: "gpu"}})
	x1 := tool.MustBuild(tool.Definition{Name: "X", Description: "one", Call: call, Origin: tool.Origin{Kind: tool.OriginRemote, Server: "b"}})
	x2 := tool.MustBuild(tool.Definition{Name: "X", Description: "two", Call: call, Origin: tool.Origin{Kind: tool.OriginRemote, Server: "a"}})
	for _, ext := range [][]*tool.Tool{{remoteRead, x1, x2}, {x2, x1, remoteRead}} {
		pool := tool.Assemble([]*tool.Tool{read}, ext, nil)
		if got := poolNames(pool); !slices.Equal(got, []string{"Read", "X"}) {
			t.Fatalf("pool %v", got)
		}
		if pool[0] != read {
			t.Error("the external Read replaced the built-in")
		}
		if pool[1] != x2 {
			t.Error("duplicate externals not resolved by origin")
		}
	}
}

func TestAssembleDenyAndDisabled(t *testing.T) {
	rules, err := tool.ParseRules([]string{"Write", "Bash(rm:*)", "mcp__slack", "Sh"})
	if err != nil {
		t.Fatal(err)
	}
	off := tool.MustBuild(tool.Definition{Name: "Off", Call: call, Enabled: func() bool { return false }})
	bs := []*tool.Tool{builtinT("Write"), builtinT("Bash"), builtinT("Shell", "Sh"), builtinT("Read"), off}
	ext := []*tool.Tool{mcpT("slack", "send_message", ""), mcpT("github", "get_issue", "")}
	got := poolNames(tool.Assemble(bs, ext, rules))
	// Write: denied by name; Shell: by its alias; slack: by server; Bash
	// stays (its rule is per call); Off is disabled.
	if want := []string{"Bash", "Read", "mcp__github__get_issue"}; !slices.Equal(got, want) {
		t.Errorf("pool %v, want %v", got, want)
	}
}

// The exact shape of both formats, strict and defer_loading included.
func TestRenderFormats(t *testing.T) {
	a := tool.MustBuild(tool.Definition{Name: "A", Description: "Does A.", Prompt: "Does A, at length.", Strict: true, Call: call,
		InputSchema: json.RawMessage("{ \"type\": \"object\",\n \"properties\": {\"z\": {}, \"a\": {}} }")})
	b := tool.MustBuild(tool.Definition{Name: "B", Call: call})
	entries := []tool.Entry{{Tool: a}, {Tool: b, DeferLoading: true}}
	got, err := tool.Render(tool.FormatAnthropic, entries)
	if err != nil {
		t.Fatal(err)
	}
	want := `[
  {
    "name": "A",
    "description": "Does A, at length.",
    "input_schema": {
      "type": "object",
      "properties": {
        "z": {},
        "a": {}
      }
    }
  },
  {
    "name": "B",
    "input_schema": {
      "type": "object"
    },
    "defer_loading": true
  }
]
`
	if string(got) != want {
		t.Errorf("anthropic:\n%s\nwant\n%s", got, want)
	}
	got, err = tool.Render(tool.FormatOpenAI, entries)
	if err != nil {
		t.Fatal(err)
	}
	want = `[
  {
    "type": "function",
    "function": {
      "name": "A",
      "description": "Does A, at length.",
      "parameters": {
        "type": "object",
        "properties": {
          "z": {},
          "a": {}
        }
      },
      "strict": true
    }
  },
  {
    "type": "function",
    "function": {
      "name": "B",
      "parameters": {
        "type": "object"
      }
    }
  }
]
`
	if string(got) != want {
		t.Errorf("openai:\n%s\nwant\n%s", got, want)
	}
	if _, err := tool.Render("gemini", entries); err == nil {
		t.Error("unknown format rendered")
	}
	for s, ok := range map[string]bool{"anthropic": true, " OpenAI ": true, "gemini": false, "": false} {
		if _, err := tool.ParseFormat(s); (err == nil) != ok {
			t.Errorf("ParseFormat(%q) = %v", s, err)
		}
	}
	if b, _ := tool.Render(tool.FormatOpenAI, nil); string(b) != "[]\n" {
		t.Errorf("empty list = %q", b)
	}
}

func ExampleAssemble() {
	builtins := []*tool.Tool{builtinT("Read"), builtinT("Bash")}
	externals := []*tool.Tool{mcpT("slack", "send_message", "Send."), mcpT("github", "get_issue", "Get."), builtinT("Read")}
	deny, _ := tool.ParseRules([]string{"mcp__slack"})
	for _, t := range tool.Assemble(builtins, externals, deny) {
		fmt.Println(t.Name(), t.Origin())
	}
	// Output:
	// Bash builtin
	// Read builtin
	// mcp__github__get_issue mcp:github
}
