// Package tenantauth writes the NATS server configuration that keeps
// tenants apart: a user for the stages, with every permission, in the
// account that holds the streams, and a user per tenant in an account of
// its own that imports only its own subjects (subjects.TenantImports),
// allowed only those (subjects.TenantPermissions), each with its
// credentials.
//
// A directory holds it all:
//
//	nats.conf          includes the rest and lists the users; rewritten by Init and AddTenant
//	stages.conf        the stages' user
//	stages.nk          its NKey seed (or stages.password)
//	tenants/NAME.conf  a tenant's user and permissions
//	tenants/NAME.nk    its NKey seed (or NAME.password), for the tenant's agent only
//
// Each .conf defines a variable holding a user entry, since nats-server
// configuration can include a file in a map but not in the users list.
package tenantauth

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nats-io/nkeys"
	"github.com/toolwire/toolwire/subjects"
	"golang.org/x/crypto/bcrypt"
)

// Method is how a user signs in.
type Method int

const (
	// NKey users sign in with a seed the server never sees (--nkey FILE).
	NKey Method = iota
	// Password users sign in with a name and a password, whose bcrypt
	// hash is all the server configuration holds.
	Password
)

// StagesUser is the user name of the stages' password user; a tenant's is
// TenantUser(name), which can never equal it.
const StagesUser = "stages"

// TenantUser is the user name of a tenant's password user.
func TenantUser(tenant string) string { return "tenant-" + tenant }

// MainFile is the configuration to start the server with (or to include in
// one's own): it includes the users' files and lists them.
const MainFile = "nats.conf"

// ErrExists is returned for credentials that exist already and were not
// to be replaced.
var ErrExists = errors.New("tenantauth: the credentials exist already")

// Written says what a call wrote.
type Written struct {
	// Conf is the user's configuration fragment, Secret its credentials
	// file: the seed (NKey) or the password (Password).
	Conf, Secret string
	// User is the user name to sign in with a password; empty for NKey.
	User string
	// Main is the rewritten MainFile and Users the users it lists.
	Main  string
	Users []string
}

// Init writes the stages' user into dir (created if missing) and the
// main file. It refuses to replace existing stages credentials unless
// force is set.
func Init(dir string, m Method, force bool) (Written, error) {
	if err := os.MkdirAll(filepath.Join(dir, "tenants"), 0o700); err != nil {
		return Written{}, fmt.Errorf("tenantauth: %w", err)
	}
	w, err := writeUser(dir, "stages", "TW_STAGES", StagesUser, m, force, nil)
	if err != nil {
		return Written{}, err
	}
	return finish(dir, w, subjects.Default())
}

// AddTenant writes tenant's user, allowed only its subjects in sp, and
// rewrites the main file. dir must have been set up by Init. It refuses a
// tenant name that cannot be a subject token, and existing credentials of
// the tenant unless force is set.
func AddTenant(dir string, sp subjects.Space, tenant string, m Method, force bool) (Written, error) {
	if err := sp.Check(); err != nil {
		return Written{}, fmt.Errorf("tenantauth: %w", err)
	}
	if err := subjects.CheckToken("tenant", tenant); err != nil {
		return Written{}, fmt.Errorf("tenantauth: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "stages.conf")); err != nil {
		return Written{}, fmt.Errorf("tenantauth: %s has no stages.conf (set it up with Init, `toolwire auth init --dir %s`): %w", dir, dir, err)
	}
	perms := sp.TenantPermissions(tenant)
	w, err := writeUser(dir, filepath.Join("tenants", tenant), tenantVar(tenant), TenantUser(tenant), m, force, &perms)
	if err != nil {
		return Written{}, err
	}
	return finish(dir, w, sp)
}

// tenantVar is the variable that holds a tenant's user entry.
func tenantVar(tenant string) string { return "TW_TENANT_" + tenant }

// writeUser writes base.conf, defining variable as the user entry, and
// the user's credentials beside it.
func writeUser(dir, base, variable, user string, m Method, force bool, perms *subjects.Permissions) (Written, error) {
	w := Written{Conf: filepath.Join(dir, base+".conf")}
	if !force {
		if _, err := os.Stat(w.Conf); err == nil {
			return Written{}, fmt.Errorf("%w: %s", ErrExists, w.Conf)
		}
	}
	var entry, secret string
	switch m {
	case NKey:
		kp, err := nkeys.CreateUser()
		if err != nil {
			return Written{}, fmt.Errorf("tenantauth: %w", err)
		}
		seed, _ := kp.Seed()
		pub, _ := kp.PublicKey()
		entry, secret = fmt.Sprintf("nkey: %q", pub), string(seed)
		w.Secret = filepath.Join(dir, base+".nk")
	case Password:
		b := make([]byte, 24)
		_, _ = rand.Read(b)
		secret = base64.RawURLEncoding.EncodeToString(b)
		hash, err := bcrypt.GenerateFromPassword([]byte(secret), 11)
		if err != nil {
			return Written{}, fmt.Errorf("tenantauth: %w", err)
		}
		entry = fmt.Sprintf("user: %q\n  password: %q", user, hash)
		w.Secret, w.User = filepath.Join(dir, base+".password"), user
	default:
		return Written{}, fmt.Errorf("tenantauth: unknown sign-in method %d", m)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by `toolwire auth`; %s.\n", describe(perms))
	fmt.Fprintf(&b, "%s = {\n  %s\n", variable, entry)
	if perms != nil {
		b.WriteString("  permissions: {\n")
		writeList(&b, "publish", perms.Publish)
		writeList(&b, "subscribe", perms.Subscribe)
		b.WriteString("  }\n")
	}
	b.WriteString("}\n")
	// The old seed or password is replaced first: a crash in between
	// leaves a user nobody can sign in as, never a secret that no longer
	// matches what the server was told.
	if err := writeFile(w.Secret, []byte(secret+"\n")); err != nil {
		return Written{}, err
	}
	if err := writeFile(w.Conf, []byte(b.String())); err != nil {
		return Written{}, err
	}
	return w, nil
}

func describe(perms *subjects.Permissions) string {
	if perms == nil {
		return "the stages' user, allowed everything"
	}
	return "a tenant's user, allowed only its own subjects"
}

func writeList(b *strings.Builder, name string, subs []string) {
	fmt.Fprintf(b, "    %s: { allow: [\n", name)
	for _, s := range subs {
		fmt.Fprintf(b, "      %q\n", s)
	}
	b.WriteString("    ] }\n")
}

// StagesAccount is the NATS account of the stages' user: every stream,
// consumer and bucket is in it.
const StagesAccount = "TOOLWIRE"

// TenantAccount is the NATS account of tenant's user.
func TenantAccount(tenant string) string { return "TENANT_" + tenant }

// entry is one export (from empty) or import (from the account named) of
// e, in nats-server configuration.
func entry(e subjects.Share, from string) string {
	kind := "stream"
	if e.Service {
		kind = "service"
	}
	if from == "" {
		if e.Streamed {
			return fmt.Sprintf("{ %s: %q, response_type: stream, response_threshold: \"30s\" }", kind, e.Subject)
		}
		return fmt.Sprintf("{ %s: %q }", kind, e.Subject)
	}
	return fmt.Sprintf("{ %s: { account: %s, subject: %q } }", kind, from, e.Subject)
}

// finish rewrites the main file and completes w with it.
func finish(dir string, w Written, sp subjects.Space) (Written, error) {
	main, users, err := WriteMain(dir, sp)
	if err != nil {
		return Written{}, err
	}
	w.Main, w.Users = main, users
	return w, nil
}

// WriteMain rewrites dir's main file from the users' files there, and
// returns its path and the users it lists: "stages", then the tenants by
// name.
//
// The stages' user is in the account StagesAccount, which holds every
// stream and bucket; each tenant's user is in an account of its own
// (TenantAccount), which imports from the stages' account only its own
// subjects (subjects.Space.TenantImports). An account boundary is what
// keeps a tenant's requests from having the server write elsewhere: the
// server checks no permission on a request's reply subject, and sends a
// direct get's answer, or a JetStream publish's ack, where the reply
// subject says — in the tenant's account, where no stream captures it.
// The tenant's user keeps its subject permissions as well.
func WriteMain(dir string, sp subjects.Space) (string, []string, error) {
	names, err := filepath.Glob(filepath.Join(dir, "tenants", "*.conf"))
	if err != nil {
		return "", nil, fmt.Errorf("tenantauth: %w", err)
	}
	var tenants []string
	for _, n := range names {
		t := strings.TrimSuffix(filepath.Base(n), ".conf")
		if subjects.CheckToken("tenant", t) != nil {
			continue // not one of ours
		}
		tenants = append(tenants, t)
	}
	sort.Strings(tenants)
	var b strings.Builder
	b.WriteString("# Written by `toolwire auth`, which rewrites it: add tenants with\n# `toolwire auth tenant add NAME`, not here.\n")
	b.WriteString("include \"stages.conf\"\n")
	for _, t := range tenants {
		fmt.Fprintf(&b, "include \"tenants/%s.conf\"\n", t)
	}
	fmt.Fprintf(&b, "accounts {\n  %s {\n    jetstream: enabled\n    users = [ $TW_STAGES ]\n", StagesAccount)
	if len(tenants) > 0 {
		b.WriteString("    exports = [\n")
		for _, e := range sp.TenantExports() {
			b.WriteString("      " + entry(e, "") + "\n")
		}
		b.WriteString("    ]\n")
	}
	b.WriteString("  }\n")
	for _, t := range tenants {
		fmt.Fprintf(&b, "  %s {\n    users = [ $%s ]\n    imports = [\n", TenantAccount(t), tenantVar(t))
		for _, e := range sp.TenantImports(t) {
			b.WriteString("      " + entry(e, StagesAccount) + "\n")
		}
		b.WriteString("    ]\n  }\n")
	}
	b.WriteString("}\n")
	main := filepath.Join(dir, MainFile)
	if err := writeFile(main, []byte(b.String())); err != nil {
		return "", nil, err
	}
	return main, append([]string{"stages"}, tenants...), nil
}
