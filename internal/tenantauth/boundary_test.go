package tenantauth_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/internal/tenantauth"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/subjects"
)

// TestAccountBoundaryAlone: with its subject permissions taken away, a
// tenant's user is still held to its own subjects by its account: what it
// publishes on another tenant's subjects, the stages' subjects or the
// buckets' reaches nothing in the stages' account, and only its own in
// subject gets through.
func TestAccountBoundaryAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a real server with the tenants' configuration")
	}
	sp := subjects.Default()
	dir, stages, acme := writeAuth(t)
	conf, err := os.ReadFile(acme.Conf)
	if err != nil {
		t.Fatal(err)
	}
	open := regexp.MustCompile(`(?s)\n  permissions: \{.*\n  \}\n`).ReplaceAll(conf, []byte("\n"))
	if string(open) == string(conf) {
		t.Fatal("no permissions block to take away")
	}
	if err := os.WriteFile(acme.Conf, open, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testenv.ServerWith(t, embedded.Options{ConfigFile: filepath.Join(dir, tenantauth.MainFile)})
	st := connectNKey(t, srv, "stages", stages.Secret)
	ac := connectNKey(t, srv, "acme", acme.Secret)

	spy, err := st.SubscribeSync(">")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Flush(); err != nil {
		t.Fatal(err)
	}
	own := sp.In("acme", "a1", subjects.KindUse)
	for _, subject := range []string{
		sp.In("globex", "g1", subjects.KindUse), sp.Out("globex", "g1"), sp.ApprovalDecision("globex", "g1", 0),
		sp.Exec("acme", "default", "a1"), sp.Result("acme", "a1", 0), sp.LeaseSubject("acme", "a1"),
		"$KV.TW_TOOLS.default.Noop.w", "$JS.API.STREAM.LIST", own,
	} {
		if err := ac.Publish(subject, []byte("from acme")); err != nil {
			t.Fatal(err)
		}
	}
	if err := ac.Flush(); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	deadline := time.Now().Add(time.Second)
	for {
		m, err := spy.NextMsg(time.Until(deadline))
		if err != nil {
			break
		}
		if string(m.Data) == "from acme" {
			got[m.Subject] = true
		}
	}
	if len(got) != 1 || !got[own] {
		t.Errorf("acme's publishes reached the stages' account on %v, want %s alone", got, own)
	}
}
