package config

import (
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
		{"nats://tw:s3cret@nats:4222", "nats://tw:<redacted>@nats:4222"},
		{"nats://s3cret@nats:4222", "nats://<redacted>@nats:4222"},
		{"nats://tw:@nats:4222", "nats://tw:<redacted>@nats:4222"},
		{"//tw:s3cret@nats:4222", "//tw:<redacted>@nats:4222"},
		{"https://mcp.example/v1?token=s3cret&x", "https://mcp.example/v1?token=<redacted>&x"},
		{"https://u:p%40ss@api.example/v1?key=s3cret&api-version=2", "https://u:<redacted>@api.example/v1?key=<redacted>&api-version=<redacted>"},
		{"nats:4222", "nats:4222"},
		{"tw:s3cret@nats:4222", Redacted},
		{"nats://tw:s3%zz@nats", Redacted},
	} {
		if got := redactURL(c.in); got != c.want {
			t.Errorf("redactURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := redactURLs("nats://a:s3cret@n1:4222, nats://b:s3cret@n2:4222"); got != "nats://a:<redacted>@n1:4222,nats://b:<redacted>@n2:4222" {
		t.Errorf("redactURLs = %q", got)
	}
}

// TestEffectiveHidesURLCredentials: config print shows no password or
// token a URL setting carries, from the file or the overrides.
func TestEffectiveHidesURLCredentials(t *testing.T) {
	c, err := Parse([]byte(`{"mcp_servers": [{"name": "m", "url": "https://mcp.example/mcp?token=s3cret-mcp"}],
		"proxy": {"upstream": "https://user:s3cret-up@api.example"}}`))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Effective("c.json", Overrides{Values: map[string]Sourced[string]{
		"nats.url":       {"nats://tw:s3cret-nats@n1:4222,nats://tw:s3cret-nats@n2:4222", "env TOOLWIRE_NATS_URL"},
		"cluster.routes": {"nats-route://route:s3cret-route@n2:6222", "flag --routes"},
	}}, 10)
	got := map[string]string{
		"nats.url": e.NATS["url"].Value.(string), "cluster.routes": e.Cluster["routes"].Value.(string),
		"proxy.upstream": e.Proxy["upstream"].Value.(string), "mcp url": e.MCPServers[0].URL,
	}
	want := map[string]string{
		"nats.url":       "nats://tw:<redacted>@n1:4222,nats://tw:<redacted>@n2:4222",
		"cluster.routes": "nats-route://route:<redacted>@n2:6222",
		"proxy.upstream": "https://user:<redacted>@api.example",
		"mcp url":        "https://mcp.example/mcp?token=<redacted>",
	}
	for k, w := range want {
		if got[k] != w || strings.Contains(got[k], "s3cret") {
			t.Errorf("%s shown as %q, want %q", k, got[k], w)
		}
	}
}
