package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/internal/tenantauth"
	"github.com/toolwire/toolwire/subjects"
)

// authFlags are the flags `auth init` and `auth tenant add` share.
type authFlags struct {
	dir             string
	password, force bool
}

func (f *authFlags) register(cmd *cobra.Command, what string) {
	fs := cmd.Flags()
	fs.StringVar(&f.dir, "dir", "toolwire-auth", "directory of the server configuration and the credentials")
	fs.BoolVar(&f.password, "password", false, "a user name and generated password instead of an NKey seed")
	fs.BoolVar(&f.force, "force", false, "replace "+what+" credentials that exist")
}

func (f *authFlags) method() tenantauth.Method {
	if f.password {
		return tenantauth.Password
	}
	return tenantauth.NKey
}

func newAuth() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Write the NATS server configuration that keeps tenants apart",
		Long: `auth writes a nats-server configuration with a user for the stages, allowed
everything, and a user per tenant, allowed only that tenant's subjects: its agent
submits and reads its own turns and nothing of another tenant's (docs/tenants.md).
Start with 'auth init', then 'auth tenant add NAME' for each tenant.`,
	}
	tenant := &cobra.Command{Use: "tenant", Short: "Manage tenants' NATS users"}
	tenant.AddCommand(newAuthTenantAdd())
	cmd.AddCommand(newAuthInit(), tenant)
	return cmd
}

func newAuthInit() *cobra.Command {
	var f authFlags
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write the stages' user and the main configuration file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w, err := tenantauth.Init(f.dir, f.method(), f.force)
			if err != nil {
				return fmt.Errorf("auth init: %w%s", err, forceHint(err))
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "wrote the stages' user to %s and its credentials to %s\n", w.Conf, w.Secret)
			printMain(out, w)
			fmt.Fprintf(out, "serve with:  toolwire serve --nats-config %s %s\n", w.Main, signIn(w))
			if abs, err := filepath.Abs(w.Main); err == nil {
				fmt.Fprintf(out, "(or add `include %q` to your nats-server's configuration)\n", abs)
			}
			return nil
		},
	}
	f.register(cmd, "the stages'")
	return cmd
}

func newAuthTenantAdd() *cobra.Command {
	var f authFlags
	cmd := &cobra.Command{
		Use:   "add NAME",
		Short: "Write a tenant's user, allowed only its subjects, and its credentials",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, sp := args[0], subjects.Default()
			w, err := tenantauth.AddTenant(f.dir, sp, name, f.method(), f.force)
			if err != nil {
				return fmt.Errorf("auth tenant add: %w%s", err, forceHint(err))
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "wrote tenant %s's user to %s and its credentials to %s (give them to its agent only)\n", name, w.Conf, w.Secret)
			printMain(out, w)
			fmt.Fprintln(out, "a running nats-server takes it on a reload (nats-server --signal reload); restart `toolwire serve`")
			fmt.Fprintf(out, "the tenant's agent connects with its credentials and the inbox prefix %s:\n", sp.Inbox(name))
			fmt.Fprintf(out, "  toolwire cancel --tenant %s %s --inbox-prefix %s --turn …\n", name, signIn(w), sp.Inbox(name))
			fmt.Fprintf(out, "  Go: nats.Connect(url, <the credentials>, nats.CustomInboxPrefix(%q))\n", sp.Inbox(name))
			return nil
		},
	}
	f.register(cmd, "the tenant's")
	return cmd
}

// forceHint says how to replace credentials that exist.
func forceHint(err error) string {
	if errors.Is(err, tenantauth.ErrExists) {
		return " (--force replaces them)"
	}
	return ""
}

func printMain(out io.Writer, w tenantauth.Written) {
	fmt.Fprintf(out, "%s lists the users: %s\n", w.Main, strings.Join(w.Users, ", "))
}

// signIn is how to sign in with w's credentials: an nkey seed is named
// by its file; a password is handed over in the environment, never on
// the command line, where every user of the machine can read it (ps,
// /proc/PID/cmdline).
func signIn(w tenantauth.Written) string {
	if w.User == "" {
		return "--nkey " + w.Secret
	}
	return fmt.Sprintf("--user %s  (with TOOLWIRE_NATS_PASSWORD, or NATS_PASSWORD, in the environment set to the contents of %s)",
		w.User, filepath.Clean(w.Secret))
}
