package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/httpapi"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/tool"
)

// TestStreamFirstResultBeforeUploadEnds: an Anthropic stream POSTed in
// paced chunks has its first result on the event stream while the upload
// is still open; the results come in call order, then done, and the POST
// answers with the calls seen once the body ends. Once with tools that run,
// once with a stream recorded from the real API (its tool is not one of
// the pipeline's, so each call is answered by the router).
func TestStreamFirstResultBeforeUploadEnds(t *testing.T) {
	e := newEnv(t, options{})
	recorded, err := os.ReadFile("../testdata/streams/anthropic_parallel_tool_use.sse")
	if err != nil {
		t.Fatal(err)
	}
	made := testenv.AnthropicStream("msg_paced",
		testenv.ToolBlock{ID: "toolu_0", Name: "Noop", Args: `{"n":0}`},
		testenv.ToolBlock{ID: "toolu_1", Name: "Sleep", Args: `{"ms":50,"safe":true}`},
		testenv.ToolBlock{ID: "toolu_2", Name: "Noop", Args: `{"n":2}`})
	for _, c := range []struct {
		name, stream string
		ids          []string
		isError      bool
	}{
		{"tools that run", made, []string{"toolu_0", "toolu_1", "toolu_2"}, false},
		{"recorded", string(recorded), []string{"toolu_015cUijgET79LXjgeYQerN2h", "toolu_01XZTimPexA7h3EVKesnKt5T"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := testCtx(t)
			turn := "turn_paced_" + strings.ReplaceAll(c.name, " ", "_")
			results := e.readSSE(e.req(ctx, "GET", "/v1/turns/"+turn+"/results", "", nil))
			defer results.close()
			pr, pw := io.Pipe()
			posted := make(chan []byte, 1)
			go func() {
				resp := e.req(ctx, "POST", "/v1/turns/"+turn+"/stream?format=anthropic", "", pr, "Content-Type", "text/event-stream")
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("POST stream: %d %s", resp.StatusCode, b)
				}
				posted <- b
			}()
			// Up to the end of the first tool_use block; the rest is held
			// back until its result has come.
			cut := afterFirstToolBlock(t, c.stream)
			if _, err := io.WriteString(pw, c.stream[:cut]); err != nil {
				t.Fatal(err)
			}
			first, ok := results.next(ctx)
			if !ok {
				t.Fatal("the results stream ended")
			}
			if r := result(t, first); r.Seq != 0 || r.ToolUseID != c.ids[0] || r.IsError != c.isError {
				t.Fatalf("first result %+v", r)
			}
			select {
			case b := <-posted:
				t.Fatalf("the POST answered before its body ended: %s", b)
			default:
			}
			// The rest, paced as a model writes it.
			for rest := c.stream[cut:]; len(rest) > 0; {
				n := min(len(rest), 97)
				if _, err := io.WriteString(pw, rest[:n]); err != nil {
					t.Fatal(err)
				}
				rest = rest[n:]
				time.Sleep(5 * time.Millisecond)
			}
			pw.Close()
			evs := results.all(ctx)
			if len(evs) != len(c.ids) {
				t.Fatalf("after the first: %d events, want %d results and done", len(evs), len(c.ids)-1)
			}
			for i, ev := range evs[:len(evs)-1] {
				if r := result(t, ev); r.Seq != i+1 || ev.ID != fmt.Sprint(i+1) || r.IsError != c.isError || r.ToolUseID != c.ids[i+1] {
					t.Errorf("event %d: id %s, result %+v", i+1, ev.ID, r)
				}
			}
			if last := evs[len(evs)-1]; last.Name != "done" || string(last.Data) != fmt.Sprintf(`{"turn_done":true,"calls":%d}`, len(c.ids)) {
				t.Errorf("last event %s %s", last.Name, last.Data)
			}
			var acc struct {
				Turn  string `json:"turn"`
				Calls int    `json:"calls"`
				Ended bool   `json:"ended"`
				Stop  string `json:"stop_reason"`
			}
			if err := json.Unmarshal(<-posted, &acc); err != nil || acc.Turn != turn || acc.Calls != len(c.ids) || !acc.Ended || acc.Stop != "tool_use" {
				t.Errorf("POST answer %+v (%v)", acc, err)
			}
		})
	}
}

// afterFirstToolBlock is the offset just past the content_block_stop event
// of a stream's first tool_use block.
func afterFirstToolBlock(t *testing.T, stream string) int {
	t.Helper()
	i := strings.Index(stream, `"type":"tool_use"`)
	j := strings.Index(stream[max(i, 0):], "event: content_block_stop")
	k := strings.Index(stream[max(i+j, 0):], "\n\n")
	if i < 0 || j < 0 || k < 0 {
		t.Fatal("the stream has no complete tool_use block")
	}
	return i + j + k + 2
}

// TestResumeWithLastEventID: a client reconnecting with Last-Event-ID: 1
// gets seq 2 onwards, each exactly once, then done.
func TestResumeWithLastEventID(t *testing.T) {
	e := newEnv(t, options{})
	ctx := testCtx(t)
	const turn = "turn_resume"
	e.status(e.req(ctx, "POST", "/v1/turns/"+turn+"/calls", "", callsBody(0, true, `{"a":0}`, `{"a":1}`, `{"a":2}`, `{"a":3}`)), http.StatusAccepted)
	all := e.readSSE(e.req(ctx, "GET", "/v1/turns/"+turn+"/results", "", nil)).all(ctx)
	if len(all) != 5 {
		t.Fatalf("%d events, want 4 results and done", len(all))
	}
	for i, ev := range all[:4] {
		if r := result(t, ev); r.Seq != i || r.Content != fmt.Sprintf(`{"a":%d}`, i) {
			t.Fatalf("event %d: %+v", i, r)
		}
	}
	resumed := e.readSSE(e.req(ctx, "GET", "/v1/turns/"+turn+"/results", "", nil, "Last-Event-ID", "1")).all(ctx)
	var seqs []int
	for _, ev := range resumed {
		if ev.Name == "result" {
			seqs = append(seqs, result(t, ev).Seq)
		}
	}
	if fmt.Sprint(seqs) != "[2 3]" || resumed[len(resumed)-1].Name != "done" {
		t.Errorf("resumed after 1: seqs %v, last %s", seqs, resumed[len(resumed)-1].Name)
	}
	// A reconnect after the last result gets done alone.
	tail := e.readSSE(e.req(ctx, "GET", "/v1/turns/"+turn+"/results", "", nil, "Last-Event-ID", "3")).all(ctx)
	if len(tail) != 1 || tail[0].Name != "done" {
		t.Errorf("resumed after 3: %v", tail)
	}
}

// TestCallsInParts: calls sent as they become known, numbered by
// first_seq, the last batch with end, come back as one ordered turn.
func TestCallsInParts(t *testing.T) {
	e := newEnv(t, options{})
	ctx := testCtx(t)
	const turn = "turn_parts"
	results := e.readSSE(e.req(ctx, "GET", "/v1/turns/"+turn+"/results", "", nil))
	b := e.status(e.req(ctx, "POST", "/v1/turns/"+turn+"/calls", "", callsBody(0, false, `{"p":0}`, `{"p":1}`)), http.StatusAccepted)
	if !strings.Contains(string(b), `"accepted":2`) || !strings.Contains(string(b), `"ended":false`) {
		t.Errorf("first part: %s", b)
	}
	e.status(e.req(ctx, "POST", "/v1/turns/"+turn+"/calls", "", callsBody(2, true, `{"p":2}`)), http.StatusAccepted)
	evs := results.all(ctx)
	if len(evs) != 4 || evs[3].Name != "done" {
		t.Fatalf("%d events", len(evs))
	}
	for i, ev := range evs[:3] {
		if r := result(t, ev); r.Seq != i || r.Content != fmt.Sprintf(`{"p":%d}`, i) {
			t.Errorf("event %d: %+v", i, r)
		}
	}
}

// TestHeartbeat: an idle stream gets comment lines, which readers ignore.
func TestHeartbeat(t *testing.T) {
	e := newEnv(t, options{api: func(c *httpapi.Config) { c.Heartbeat = 50 * time.Millisecond }})
	ctx := testCtx(t)
	r := e.readSSE(e.req(ctx, "GET", "/v1/turns/turn_idle/results", "", nil))
	defer r.close()
	testenv.WaitFor(t, testTimeout, "three heartbeats", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.comments >= 3
	})
}

// TestCancelAndDiscard: a cancel answers a running call of a turn and
// completes it; a discard closes a turn that never ended at the calls it
// had.
func TestCancelAndDiscard(t *testing.T) {
	e := newEnv(t, options{})
	ctx := testCtx(t)
	// Sleep is not interruptible: once started it runs out (the cancel may
	// also come before it starts); the call after it, not started when the
	// cancel comes, never runs.
	body := `{"calls":[{"id":"toolu_s","name":"Sleep","input":{"ms":1500}},{"id":"toolu_n","name":"Noop","input":{}}],"end":true}`
	results := e.readSSE(e.req(ctx, "GET", "/v1/turns/turn_cancel/results", "", nil))
	e.status(e.req(ctx, "POST", "/v1/turns/turn_cancel/calls", "", body), http.StatusAccepted)
	e.status(e.req(ctx, "POST", "/v1/turns/turn_cancel/cancel", "", `{"reason":"the user pressed stop"}`), http.StatusNoContent)
	evs := results.all(ctx)
	if len(evs) != 3 || !result(t, evs[1]).IsError || evs[2].Name != "done" {
		t.Fatalf("cancelled turn: %s / %s / %s", evs[0].Data, evs[1].Data, evs[len(evs)-1].Name)
	}

	e.status(e.req(ctx, "POST", "/v1/turns/turn_discard/calls", "", callsBody(0, false, `{"d":0}`)), http.StatusAccepted)
	e.status(e.req(ctx, "POST", "/v1/turns/turn_discard/discard", "", nil), http.StatusNoContent)
	evs = e.readSSE(e.req(ctx, "GET", "/v1/turns/turn_discard/results", "", nil)).all(ctx)
	if len(evs) == 0 || evs[len(evs)-1].Name != "done" {
		t.Fatalf("discarded turn: %v", evs)
	}
}

// TestTools: the tools list is the bytes `toolwire tools` prints, in
// either format.
func TestTools(t *testing.T) {
	e := newEnv(t, options{})
	ctx := testCtx(t)
	for _, f := range []tool.Format{tool.FormatAnthropic, tool.FormatOpenAI} {
		want, err := e.tools(f)
		if err != nil {
			t.Fatal(err)
		}
		got := e.status(e.req(ctx, "GET", "/v1/tools?format="+string(f), "", nil), http.StatusOK)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the list differs from what tool.Render gives", f)
		}
	}
	e.status(e.req(invalid(ctx), "GET", "/v1/tools?format=gemini", "", nil), http.StatusBadRequest)
	doc := e.status(e.req(ctx, "GET", "/v1/openapi.json", "", nil), http.StatusOK)
	if !bytes.Equal(doc, schemas.OpenAPI()) {
		t.Error("GET /v1/openapi.json is not the document in schemas/")
	}
}

// TestBlob: an oversize output is previewed in its result and served whole
// by its blob_ref.
func TestBlob(t *testing.T) {
	e := newEnv(t, options{})
	ctx := testCtx(t)
	input := `{"pad":"` + strings.Repeat("x", tool.DefaultMaxResultChars+5000) + `"}`
	e.status(e.req(ctx, "POST", "/v1/turns/turn_blob/calls", "", `{"calls":[{"name":"Noop","input":`+input+`}],"end":true}`), http.StatusAccepted)
	evs := e.readSSE(e.req(ctx, "GET", "/v1/turns/turn_blob/results", "", nil)).all(ctx)
	r := result(t, evs[0])
	if !r.Truncated || r.BlobRef == "" {
		t.Fatalf("result not stored for its size: truncated %v, blob %q", r.Truncated, r.BlobRef)
	}
	got := e.status(e.req(ctx, "GET", "/v1/blobs/"+url.PathEscape(r.BlobRef), "", nil), http.StatusOK)
	if string(got) != input {
		t.Errorf("blob: %d bytes, want %d", len(got), len(input))
	}
	e.status(e.req(ctx, "GET", "/v1/blobs/"+url.PathEscape("other/turn_blob/0"), "", nil), http.StatusNotFound)
	e.status(e.req(ctx, "GET", "/v1/blobs/"+url.PathEscape("default/turn_blob/9"), "", nil), http.StatusNotFound)
}

// TestUploadCutDiscardsTheTurn: an upload that stops before the stream's
// end loses nothing: the calls seen are answered and the turn completes.
func TestUploadCutDiscardsTheTurn(t *testing.T) {
	e := newEnv(t, options{})
	ctx := testCtx(t)
	stream := testenv.AnthropicStream("msg_cut", testenv.ToolBlock{ID: "toolu_c0", Name: "Noop", Args: `{}`}, testenv.ToolBlock{ID: "toolu_c1", Name: "Noop", Args: `{}`})
	cut := strings.Index(stream, "event: message_delta")
	results := e.readSSE(e.req(ctx, "GET", "/v1/turns/turn_cut/results", "", nil))
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/v1/turns/turn_cut/stream?format=anthropic", pr)
		resp, err := e.client.Do(req)
		if err != nil {
			done <- 0 // the client gave up its own request: no answer to read
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	io.WriteString(pw, stream[:cut])
	// Both calls are published before the upload breaks.
	for i := 0; i < 2; i++ {
		if ev, ok := results.next(ctx); !ok || result(t, ev).Seq != i {
			t.Fatalf("result %d: %v", i, ev)
		}
	}
	pw.CloseWithError(fmt.Errorf("the agent died"))
	if code := <-done; code != 0 && code < 400 {
		t.Errorf("a failed upload answered %d", code)
	}
	evs := results.all(ctx)
	if len(evs) != 1 || evs[0].Name != "done" || string(evs[0].Data) != `{"turn_done":true,"calls":2}` {
		t.Fatalf("after the cut: %v", evs)
	}
}
