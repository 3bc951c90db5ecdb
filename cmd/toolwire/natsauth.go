package main

import (
	"fmt"
	"os"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// natsAuth are the credentials and TLS settings of a command's NATS
// connections, as the nats CLI takes them: flags first, then the NATS_*
// variables of the environment.
type natsAuth struct {
	user, password, token, nkey, creds string
	tlsCert, tlsKey, tlsCA             string
	tlsFirst                           bool
	inboxPrefix                        string
}

// register adds the flags to fs.
func (a *natsAuth) register(fs *pflag.FlagSet) {
	fs.StringVar(&a.user, "user", "", "NATS user (or $NATS_USER)")
	fs.StringVar(&a.password, "password", "", "NATS password (or $NATS_PASSWORD)")
	fs.StringVar(&a.token, "token", "", "NATS authentication token (or $NATS_TOKEN)")
	fs.StringVar(&a.nkey, "nkey", "", "file holding an NKey seed to sign in with (or $NATS_NKEY)")
	fs.StringVar(&a.creds, "creds", "", "NATS user credentials file, JWT and seed (or $NATS_CREDS)")
	fs.StringVar(&a.tlsCert, "tlscert", "", "TLS client certificate file (or $NATS_CERT)")
	fs.StringVar(&a.tlsKey, "tlskey", "", "TLS client key file (or $NATS_KEY)")
	fs.StringVar(&a.tlsCA, "tlsca", "", "CA file to verify the NATS server's certificate with (or $NATS_CA)")
	fs.BoolVar(&a.tlsFirst, "tlsfirst", false, "start TLS before the NATS handshake (servers with handshake_first)")
	fs.StringVar(&a.inboxPrefix, "inbox-prefix", "", "prefix of reply subjects, as a tenant's user must use (or $NATS_INBOX_PREFIX)")
}

// options are the connection options the settings ask for.
func (a *natsAuth) options() ([]nats.Option, error) {
	or := func(v, env string) string {
		if v != "" {
			return v
		}
		return os.Getenv(env)
	}
	user, password, token := or(a.user, "NATS_USER"), or(a.password, "NATS_PASSWORD"), or(a.token, "NATS_TOKEN")
	nkey, creds := or(a.nkey, "NATS_NKEY"), or(a.creds, "NATS_CREDS")
	cert, key, ca := or(a.tlsCert, "NATS_CERT"), or(a.tlsKey, "NATS_KEY"), or(a.tlsCA, "NATS_CA")
	var opts []nats.Option
	ways := 0
	if user != "" || password != "" {
		if user == "" {
			return nil, fmt.Errorf("--password without --user")
		}
		opts, ways = append(opts, nats.UserInfo(user, password)), ways+1
	}
	if token != "" {
		opts, ways = append(opts, nats.Token(token)), ways+1
	}
	if nkey != "" {
		o, err := nats.NkeyOptionFromSeed(nkey)
		if err != nil {
			return nil, fmt.Errorf("--nkey %s: %w", nkey, err)
		}
		opts, ways = append(opts, o), ways+1
	}
	if creds != "" {
		if _, err := os.Stat(creds); err != nil {
			return nil, fmt.Errorf("--creds: %w", err)
		}
		opts, ways = append(opts, nats.UserCredentials(creds)), ways+1
	}
	if ways > 1 {
		return nil, fmt.Errorf("give one way to sign in to NATS: a user and password, a token, an nkey or a credentials file")
	}
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("--tlscert and --tlskey go together")
	}
	if cert != "" {
		opts = append(opts, nats.ClientCert(cert, key))
	}
	if ca != "" {
		opts = append(opts, nats.RootCAs(ca))
	}
	if a.tlsFirst {
		opts = append(opts, nats.TLSHandshakeFirst())
	}
	if p := or(a.inboxPrefix, "NATS_INBOX_PREFIX"); p != "" {
		opts = append(opts, nats.CustomInboxPrefix(p))
	}
	return opts, nil
}

// natsURLOrEnv is the --nats of cmd, or $NATS_URL when the flag was not given.
func natsURLOrEnv(cmd *cobra.Command, url string) string {
	if !cmd.Flags().Changed("nats") {
		if env := os.Getenv("NATS_URL"); env != "" {
			return env
		}
	}
	return url
}
