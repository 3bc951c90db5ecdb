package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

const (
	acmeToken   = "acme-token-0123456789abcdef"
	globexToken = "globex-token-0123456789abcdef"
)

// TestAuthentication: with tokens configured, no token and a wrong one get
// 401 and see nothing; the tenant comes from the token, so one tenant
// cannot read, steer or fetch another's turn under the same turn id.
func TestAuthentication(t *testing.T) {
	e := newEnv(t, options{tokens: map[string]string{acmeToken: "acme", globexToken: "globex"}})
	ctx := testCtx(t)
	const turn = "turn_shared_name"
	e.status(e.req(ctx, "POST", "/v1/turns/"+turn+"/calls", acmeToken, callsBody(0, true, `{"secret":"acme's"}`)), http.StatusAccepted)
	acme := e.readSSE(e.req(ctx, "GET", "/v1/turns/"+turn+"/results", acmeToken, nil)).all(ctx)
	if len(acme) != 2 || !strings.Contains(string(acme[0].Data), "acme's") {
		t.Fatalf("acme's own turn: %v", acme)
	}

	for name, tok := range map[string]string{"no token": "", "a wrong token": "not-a-token-of-anyone-at-all"} {
		for _, path := range []string{"/v1/turns/" + turn + "/results", "/v1/tools"} {
			resp := e.req(ctx, "GET", path, tok, nil)
			b := e.status(resp, http.StatusUnauthorized)
			if resp.Header.Get("WWW-Authenticate") == "" || resp.Header.Get("Content-Type") != "application/problem+json" || strings.Contains(string(b), "acme's") {
				t.Errorf("%s on %s: %s %q", name, path, resp.Header, b)
			}
		}
		e.status(e.req(ctx, "POST", "/v1/turns/"+turn+"/cancel", tok, nil), http.StatusUnauthorized)
	}
	// The contract itself is public.
	e.status(e.req(ctx, "GET", "/v1/openapi.json", "", nil), http.StatusOK)

	// globex's turn of the same name is its own: empty until globex
	// submits, and then globex's only.
	other := e.readSSE(e.req(ctx, "GET", "/v1/turns/"+turn+"/results", globexToken, nil))
	select {
	case ev := <-other.events:
		t.Fatalf("globex saw an event of acme's turn: %s %s", ev.Name, ev.Data)
	case <-time.After(500 * time.Millisecond):
	}
	e.status(e.req(ctx, "POST", "/v1/turns/"+turn+"/calls", globexToken, callsBody(0, true, `{"mine":"globex"}`)), http.StatusAccepted)
	evs := other.all(ctx)
	if len(evs) != 2 || strings.Contains(string(evs[0].Data), "acme's") || !strings.Contains(string(evs[0].Data), "globex") {
		t.Fatalf("globex's turn: %v", evs)
	}
	var done struct{ Calls int }
	if err := json.Unmarshal(evs[1].Data, &done); err != nil || done.Calls != 1 {
		t.Errorf("globex done: %s", evs[1].Data)
	}
	// A blob ref of another tenant is not found, whatever it names.
	e.status(e.req(ctx, "GET", "/v1/blobs/acme%2F"+turn+"%2F0", globexToken, nil), http.StatusNotFound)
}
