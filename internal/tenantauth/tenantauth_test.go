package tenantauth_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/toolwire/toolwire/internal/tenantauth"
	"github.com/toolwire/toolwire/subjects"
)

// TestWrite: Init and AddTenant write files a nats-server reads as the
// users and permissions meant, refuse bad names and existing credentials,
// and replace them with force.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	sp := subjects.Default()
	if _, err := tenantauth.AddTenant(dir, sp, "acme", tenantauth.NKey, false); err == nil || !strings.Contains(err.Error(), "auth init") {
		t.Errorf("a tenant before init: %v, want an error saying to run init", err)
	}
	if _, err := tenantauth.Init(dir, tenantauth.NKey, false); err != nil {
		t.Fatal(err)
	}
	acme, err := tenantauth.AddTenant(dir, sp, "acme", tenantauth.NKey, false)
	if err != nil {
		t.Fatal(err)
	}
	globex, err := tenantauth.AddTenant(dir, sp, "glo-bex_2", tenantauth.Password, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"stages", "acme", "glo-bex_2"}; !slices.Equal(globex.Users, want) {
		t.Errorf("main file lists %v, want %v", globex.Users, want)
	}
	if globex.User != "tenant-glo-bex_2" || acme.User != "" {
		t.Errorf("password user %q, nkey user %q", globex.User, acme.User)
	}
	for _, f := range []string{acme.Secret, globex.Secret, acme.Conf} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want a file only its owner reads", f, fi.Mode(), err)
		}
	}
	seed, _ := os.ReadFile(acme.Secret)
	if !strings.HasPrefix(string(seed), "SU") {
		t.Errorf("the nkey file holds %.4q…, want a user seed", seed)
	}
	password, _ := os.ReadFile(globex.Secret)
	if conf, _ := os.ReadFile(globex.Conf); strings.Contains(string(conf), strings.TrimSpace(string(password))) {
		t.Error("the configuration holds the password itself, not its hash")
	}

	opts, err := server.ProcessConfigFile(filepath.Join(dir, tenantauth.MainFile))
	if err != nil {
		t.Fatalf("nats-server refuses the configuration: %v", err)
	}
	if len(opts.Nkeys) != 2 || len(opts.Users) != 1 {
		t.Fatalf("%d nkey users and %d password users, want 2 and 1", len(opts.Nkeys), len(opts.Users))
	}
	// Each user is in its account: the stages' in the one that holds the
	// streams, unrestricted; each tenant's in its own.
	accounts := map[string]string{}
	for _, u := range opts.Nkeys {
		if u.Account == nil {
			t.Fatalf("nkey user %s has no account", u.Nkey)
		}
		accounts[u.Account.Name] = u.Nkey
		if u.Account.Name == tenantauth.StagesAccount && u.Permissions != nil {
			t.Errorf("the stages' user is restricted: %+v", u.Permissions)
		}
	}
	if _, ok := accounts[tenantauth.StagesAccount]; !ok {
		t.Errorf("no user in %s: %v", tenantauth.StagesAccount, accounts)
	}
	if _, ok := accounts[tenantauth.TenantAccount("acme")]; !ok {
		t.Errorf("acme's user is not in %s: %v", tenantauth.TenantAccount("acme"), accounts)
	}
	if a := opts.Users[0].Account; a == nil || a.Name != tenantauth.TenantAccount("glo-bex_2") {
		t.Errorf("glo-bex_2's user is in account %v, want %s", a, tenantauth.TenantAccount("glo-bex_2"))
	}
	want := sp.TenantPermissions("glo-bex_2")
	got := opts.Users[0].Permissions
	if got == nil || !slices.Equal(got.Publish.Allow, want.Publish) || !slices.Equal(got.Subscribe.Allow, want.Subscribe) {
		t.Errorf("the tenant's permissions read back as %+v, want %+v", got, want)
	}

	if _, err := tenantauth.AddTenant(dir, sp, "acme", tenantauth.NKey, false); !errors.Is(err, tenantauth.ErrExists) {
		t.Errorf("adding acme again: %v, want ErrExists", err)
	}
	if again, _ := os.ReadFile(acme.Secret); string(again) != string(seed) {
		t.Error("a refused add replaced the seed")
	}
	// Files someone made readable to all before the replacement are
	// written anew, readable by their owner only.
	for _, f := range []string{acme.Secret, acme.Conf, acme.Main} {
		if err := os.Chmod(f, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tenantauth.AddTenant(dir, sp, "acme", tenantauth.NKey, true); err != nil {
		t.Fatalf("adding acme again with force: %v", err)
	}
	if again, _ := os.ReadFile(acme.Secret); string(again) == string(seed) {
		t.Error("force kept the old seed")
	}
	for _, f := range []string{acme.Secret, acme.Conf, acme.Main} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s replaced with force: %v %v, want a file only its owner reads", f, fi.Mode(), err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "tenants", ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if _, err := tenantauth.Init(dir, tenantauth.NKey, false); !errors.Is(err, tenantauth.ErrExists) {
		t.Errorf("init again: %v, want ErrExists", err)
	}
	for _, bad := range []string{"", "a.b", "*", ">", "a b", "tenant/x"} {
		if _, err := tenantauth.AddTenant(dir, sp, bad, tenantauth.NKey, false); !errors.Is(err, subjects.ErrBadToken) {
			t.Errorf("tenant %q: %v, want ErrBadToken", bad, err)
		}
	}
}
