package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/httpapi"
)

// TestProblems: each kind of bad request gets its status and a problem
// document whose detail says what was wrong and where.
func TestProblems(t *testing.T) {
	e := newEnv(t, options{api: func(c *httpapi.Config) { c.MaxBodyBytes = 4096 }})
	ctx := invalid(testCtx(t))
	cases := []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
		detail                   string
	}{
		{"bad turn id", "POST", "/v1/turns/a.b/calls", callsBody(0, true, `{}`), nil, 400, `"a.b" has '.'`},
		{"no format", "POST", "/v1/turns/t1/stream", "x", nil, 400, "format query parameter is missing"},
		{"unknown format", "POST", "/v1/turns/t1/stream?format=openai", "x", nil, 400, "known: anthropic"},
		{"bad concurrency", "POST", "/v1/turns/t1/stream?format=anthropic&max_concurrency=0", "x", nil, 400, "max_concurrency"},
		{"not JSON", "POST", "/v1/turns/t1/calls", "{\n \"calls\": [,]}", nil, 400, "line 2"},
		{"unknown field", "POST", "/v1/turns/t1/calls", `{"calls":[],"end":true,"tenant":"x"}`, nil, 400, `unknown field "tenant"`},
		{"wrong type", "POST", "/v1/turns/t1/calls", `{"calls":[{"name":1}]}`, nil, 400, "calls.name"},
		{"empty body", "POST", "/v1/turns/t1/calls", "", nil, 400, "empty"},
		{"form body", "POST", "/v1/turns/t1/calls", `{"calls":[],"end":true}`, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "application/json"},
		{"too large", "POST", "/v1/turns/t1/calls", `{"calls":[{"name":"Noop","input":{"p":"` + strings.Repeat("x", 5000) + `"}}]}`, nil, 413, "4096 bytes"},
		{"no name", "POST", "/v1/turns/t1/calls", `{"calls":[{"input":{}}],"end":true}`, nil, 422, "calls[0] has no name"},
		{"past the limit", "POST", "/v1/turns/t1/calls", callsBody(511, true, `{}`, `{}`), nil, 422, "limit of 512 calls"},
		{"nothing", "POST", "/v1/turns/t1/calls", `{"calls":[]}`, nil, 422, "nothing to do"},
		{"bad Last-Event-ID", "GET", "/v1/turns/t1/results", "", []string{"Last-Event-ID", "seven"}, 400, "Last-Event-ID"},
		{"bad seq", "POST", "/v1/turns/t1/approvals/x", `{"allow":true}`, nil, 400, "seq"},
		{"no allow", "POST", "/v1/turns/t1/approvals/0", `{"reason":"?"}`, nil, 422, "allow is missing"},
		{"wrong method", "DELETE", "/v1/turns/t1/results", "", nil, 405, "DELETE is not allowed"},
		{"unknown path", "GET", "/v2/turns", "", nil, 404, "/v2/turns"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body any
			if c.body != "" {
				body = c.body
			}
			resp := e.req(ctx, c.method, c.path, "", body, c.hdr...)
			b := e.status(resp, c.status)
			if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type %q", ct)
			}
			var p struct {
				Type, Title, Detail, Instance string
				Status                        int
			}
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatal(err)
			}
			if p.Status != c.status || !strings.HasPrefix(p.Type, "https://toolwire.dev/problems/") || p.Title == "" || p.Instance != strings.Split(c.path, "?")[0] {
				t.Errorf("problem %+v", p)
			}
			if !strings.Contains(p.Detail, c.detail) {
				t.Errorf("detail %q does not say %q", p.Detail, c.detail)
			}
		})
	}
}
