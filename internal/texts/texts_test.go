package texts_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/texts"
)

// TestTexts pins every text a model can read in a result, word for word.
// A failure here means what the model sees changed: make it a deliberate
// change, and update the docs that quote the text.
func TestTexts(t *testing.T) {
	pinned := map[string]bool{}
	for _, c := range pins() {
		pinned[c.name] = true
		if c.got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, c.got, c.want)
		}
	}
	// Every text of the table is pinned: a new one comes with its case.
	f, err := parser.ParseFile(token.NewFileSet(), "texts.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			names = append(names, d.Name.Name)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if v, ok := s.(*ast.ValueSpec); ok {
					for _, n := range v.Names {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	for _, name := range names {
		if ast.IsExported(name) && !pinned[name] {
			t.Errorf("%s is not pinned in this test", name)
		}
	}
}

type pin struct{ name, got, want string }

// pins are the texts, each named by its identifier in texts.go; a text
// may have more than one case.
func pins() []pin {
	return []pin{
		{"Discard", texts.Discard,
			"Streaming fallback - tool execution discarded"},
		{"Interrupt", texts.Interrupt,
			"The user doesn't want to proceed with this tool use. The tool use was rejected."},
		{"Sibling", texts.Sibling("Bash(mkdir /nonexistent/x)"),
			"Cancelled: parallel tool call Bash(mkdir /nonexistent/x) errored"},

		{"StreamEnded", texts.StreamEnded,
			"the model's stream ended before this tool call was complete"},
		{"Incomplete", texts.Incomplete(texts.StreamEnded),
			"Tool call incomplete, not executed: the model's stream ended before this tool call was complete"},
		{"NoSuchTool", texts.NoSuchTool("Lower"),
			"No such tool available: Lower"},
		{"NoWorker", texts.NoWorker("Lower"),
			"No worker for tool Lower: every worker of the pool that hosts it has stopped"},
		{"InvalidArguments", texts.InvalidArguments("invalid arguments at offset 7: unexpected end of input"),
			"Invalid tool arguments: invalid arguments at offset 7: unexpected end of input"},
		{"Late", texts.Late(3, 2),
			"tool_use seq 3 came after its turn's end, which counted 2 calls; not executed"},
		{"TurnOver", texts.TurnOver,
			"the turn is over (its end was recorded and its lease has expired)"},
		{"Expired", texts.Expired(4),
			"tool_use seq 4: the turn is over (its end was recorded and its lease has expired); not executed"},
		{"NotExecuted", texts.NotExecuted("handler panicked: boom"),
			"Tool call not executed: handler panicked: boom"},
		{"OverLimit", texts.OverLimit("input: 2000000 bytes is not below the limit of 1048576"),
			"Tool call not executed: the tool_use event is over a limit: input: 2000000 bytes is not below the limit of 1048576"},
		{"MalformedUse", texts.MalformedUse("msgpack: invalid code"),
			"Tool call not executed: malformed tool_use event: msgpack: invalid code"},

		{"MalformedDispatch", texts.MalformedDispatch("msgpack: invalid code"),
			"Tool call not executed: malformed dispatch event: msgpack: invalid code"},
		{"NotHosted", texts.NotHosted("Lower", "gpu"),
			"No such tool available: Lower (not hosted by pool gpu)"},
		{"OutcomeUnknown", texts.OutcomeUnknown,
			"execution interrupted; outcome unknown (the worker running this call stopped, and the call is not read-only, so it was not run again)"},
		{"Timeout", texts.Timeout("Sleep", 1500*time.Millisecond),
			"Sleep timed out after 1.5s"},

		{"PlanMode", texts.PlanMode("Write"),
			"Permission denied: the turn is in plan mode, and this Write call is not read-only. Leave plan mode with ExitPlanMode first."},
		{"RuleDenied", texts.RuleDenied("Bash", "Bash(rm:*)", "rm -rf build"),
			`Permission to use Bash was denied: the rule Bash(rm:*) matches "rm -rf build"`},
		{"ApprovalTimedOut", texts.ApprovalTimedOut("Bash", 5*time.Minute),
			"Permission to use Bash was not given: nobody answered the approval request within 5m0s"},
		{"Refused", texts.Refused("Bash", ""),
			"Permission to use Bash was refused by the user"},
		{"Refused", texts.Refused("Bash", "not on main"),
			"Permission to use Bash was refused by the user: not on main"},

		{"Empty", texts.Empty("Bash"),
			"(Bash completed with no output)"},
		{"Stored", texts.Stored(250000, "acme/t1/0"),
			"\n… [output too long: 250000 characters in all; the full output is stored as blob acme/t1/0]"},
		{"Truncated", texts.Truncated(250000),
			"\n… [output truncated: 250000 characters in all]"},
		{"CutStored", texts.CutStored(20000000, 8388608, "acme/t1/0"),
			"\n… [output too long: 20000000 bytes of output in all; the stored copy holds only the first 8388608 bytes, as blob acme/t1/0]"},
		{"CutTruncated", texts.CutTruncated(20000000),
			"\n… [output truncated: 20000000 bytes of output in all]"},

		{"Lost", texts.Lost("result slot holds toolwire.turn_end, not toolwire.tool_result"),
			"the result of this call was lost: its message was malformed (result slot holds toolwire.turn_end, not toolwire.tool_result)"},
		{"NeverArrived", texts.NeverArrived(30 * time.Second),
			"the result of this call never arrived: the turn waited 30s for it after a later result (or the turn's end) was stored"},

		{"TooLargeToSend", texts.TooLargeToSend(1048700, 1048576),
			"its arguments were too large to send: the tool_use event is 1048700 bytes, over the NATS server's max_payload of 1048576 bytes"},
	}
}

// TestTextsAreOneLine: the texts read as one line each (the preview marks
// begin with their own line break), with no white space at either end for
// the sanitizer to trim.
func TestTextsAreOneLine(t *testing.T) {
	for _, s := range []string{
		texts.Discard, texts.Interrupt, texts.Sibling("Bash"), texts.StreamEnded, texts.Incomplete("x"),
		texts.NoSuchTool("X"), texts.NoWorker("X"), texts.InvalidArguments("x"), texts.Late(1, 1),
		texts.TurnOver, texts.Expired(1), texts.NotExecuted("x"), texts.OverLimit("x"), texts.MalformedUse("x"),
		texts.MalformedDispatch("x"), texts.NotHosted("X", "p"), texts.OutcomeUnknown, texts.Timeout("X", time.Second),
		texts.PlanMode("X"), texts.RuleDenied("X", "X", "x"), texts.ApprovalTimedOut("X", time.Second), texts.Refused("X", "x"),
		texts.Empty("X"), texts.Lost("x"), texts.NeverArrived(time.Second), texts.TooLargeToSend(2, 1),
	} {
		if strings.ContainsAny(s, "\r\n") || strings.TrimSpace(s) != s {
			t.Errorf("%q is not one trimmed line", s)
		}
	}
	for _, s := range []string{texts.Stored(1, "b"), texts.Truncated(1), texts.CutStored(2, 1, "b"), texts.CutTruncated(1)} {
		if !strings.HasPrefix(s, "\n… [") || strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "]") {
			t.Errorf("preview mark %q does not take one line of its own", s)
		}
	}
}
