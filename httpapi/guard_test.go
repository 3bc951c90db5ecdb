package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/httpapi"
)

// TestNoTokensRefusesWebPages: without tokens, what a web page could send
// — a request naming its page in Origin or Sec-Fetch-Site, or one to a
// name rebound to 127.0.0.1 — is refused before anything runs; the same
// request from an agent (no such headers, a loopback Host) is taken.
func TestNoTokensRefusesWebPages(t *testing.T) {
	e := newEnv(t, options{})
	ctx := testCtx(t)
	body := callsBody(0, true, `{"from":"a page"}`)
	for name, hdr := range map[string][]string{
		"cross-site fetch":    {"Origin", "https://evil.example"},
		"fetch metadata":      {"Sec-Fetch-Site", "cross-site"},
		"rebound name (Host)": {"Host", "evil.example:8081"},
	} {
		resp := e.req(ctx, "POST", "/v1/turns/turn_page/calls", "", body, hdr...)
		if b := e.status(resp, http.StatusForbidden); !strings.Contains(string(b), "this API has no tokens") {
			t.Errorf("%s: %s", name, b)
		}
	}
	// Nothing ran: the turn has no result; the agent's own request is taken.
	e.status(e.req(ctx, "POST", "/v1/turns/turn_agent/calls", "", body, "Sec-Fetch-Site", "none"), http.StatusAccepted)
	r := e.readSSE(e.req(ctx, "GET", "/v1/turns/turn_page/results", "", nil))
	defer r.close()
	select {
	case ev := <-r.events:
		t.Fatalf("a refused request ran: %s %s", ev.Name, ev.Data)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestSlowDown: a pipeline that stays behind is answered 429 with
// Retry-After once the publish wait is over, not waited for as long as the
// client would wait.
func TestSlowDown(t *testing.T) {
	e := newEnv(t, options{maxPending: 3, api: func(c *httpapi.Config) { c.PublishWait = 300 * time.Millisecond }})
	ctx := testCtx(t)
	e.status(e.req(ctx, "POST", "/v1/turns/fits/calls", "", callsBody(0, true, `{}`, `{}`, `{}`)), http.StatusAccepted)
	resp := e.req(ctx, "POST", "/v1/turns/behind/calls", "", callsBody(0, true, `{}`))
	b := e.status(resp, http.StatusTooManyRequests)
	if resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "slow-down") {
		t.Errorf("429 without Retry-After or its type: %s %s", resp.Header, b)
	}
}

// TestEdgeNumbers: a first_seq near the integer limit does not wrap past
// the calls limit; Last-Event-ID takes digits only; names and ids are
// bounded as the document says.
func TestEdgeNumbers(t *testing.T) {
	e := newEnv(t, options{})
	ctx := invalid(testCtx(t))
	e.status(e.req(ctx, "POST", "/v1/turns/t/calls", "", `{"calls":[{"name":"Noop"}],"first_seq":9223372036854775807,"end":true}`), http.StatusUnprocessableEntity)
	e.status(e.req(ctx, "POST", "/v1/turns/t/calls", "", `{"calls":[{"name":"`+strings.Repeat("n", 300)+`"}],"end":true}`), http.StatusUnprocessableEntity)
	e.status(e.req(ctx, "GET", "/v1/turns/t/results", "", nil, "Last-Event-ID", "+5"), http.StatusBadRequest)
	e.status(e.req(ctx, "POST", "/v1/turns/t/approvals/9999", "", `{"allow":true}`), http.StatusBadRequest)
}
