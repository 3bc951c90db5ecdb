package subjects

import (
	"strings"
	"testing"
)

// TestReplyAllowed: a reader's answer goes to the requester's inbox, to a
// default inbox, or to the reply the server made for a request through an
// import — never to another tenant's inbox or to any other subject.
func TestReplyAllowed(t *testing.T) {
	sp := Default()
	for _, c := range []struct {
		reply string
		want  bool
	}{
		{sp.Inbox("acme") + ".x1", true},
		{"_INBOX.abc.1", true},
		{"_R_.3hyCid.wXSLba", true},
		{sp.Inbox("globex") + ".x1", false},
		{sp.Inbox("acme"), false},
		{"tw.globex.out.g1", false},
		{"$KV.TW_LEASE.globex.g1", false},
		{"_R_", false},
		{"", false},
	} {
		if got := sp.ReplyAllowed("acme", c.reply); got != c.want {
			t.Errorf("ReplyAllowed(acme, %q) = %v, want %v", c.reply, got, c.want)
		}
	}
}

// TestTenantImports: a tenant's account imports its own subjects only: each
// import is its export with the tenant's token filled in, and nothing else.
func TestTenantImports(t *testing.T) {
	sp := Default()
	exports := sp.TenantExports()
	imports := sp.TenantImports("acme")
	if len(imports) != len(exports) {
		t.Fatalf("%d imports for %d exports", len(imports), len(exports))
	}
	for i, im := range imports {
		ex := exports[i]
		if im.Service != ex.Service || im.Streamed != ex.Streamed {
			t.Errorf("import %s is not of the kind of export %s", im.Subject, ex.Subject)
		}
		ft, pt := strings.Split(ex.Subject, "."), strings.Split(im.Subject, ".")
		if len(ft) != len(pt) {
			t.Errorf("import %s is not export %s narrowed", im.Subject, ex.Subject)
			continue
		}
		tenant := false
		for k := range ft {
			switch {
			case ft[k] == "*" && !tenant:
				// The first wildcard is the tenant's token.
				tenant = true
				if pt[k] != "acme" {
					t.Errorf("import %s: token %d is %q, want acme", im.Subject, k, pt[k])
				}
			case ft[k] != pt[k]:
				t.Errorf("import %s differs from export %s at token %d", im.Subject, ex.Subject, k)
			}
		}
		if !tenant {
			t.Errorf("export %s has no tenant wildcard", ex.Subject)
		}
	}
}
