package main

import (
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/toolwire/toolwire/internal/config"
)

// envConfig names the configuration file when --config does not.
const envConfig = "TOOLWIRE_CONFIG"

// The settings each command's flags stand for (docs/configuration.md),
// flag name to key. A flag the user did not give takes the setting's
// TOOLWIRE_* variable, else the file's value, else keeps its default.
var (
	natsKeys = map[string]string{
		"nats": "nats.url", "user": "nats.user", "password": "nats.password", "token": "nats.token",
		"nkey": "nats.nkey", "creds": "nats.creds", "tlscert": "nats.tlscert", "tlskey": "nats.tlskey",
		"tlsca": "nats.tlsca", "tlsfirst": "nats.tlsfirst", "inbox-prefix": "nats.inbox_prefix",
	}
	logKeys   = map[string]string{"log-format": "log.format", "log-level": "log.level"}
	serveKeys = map[string]string{
		"listen": "serve.listen", "store": "serve.store", "http": "serve.http", "api": "serve.api",
		"nats-config": "serve.nats_config", "nats-logs": "serve.nats_logs", "stages": "serve.stages",
		"executors": "serve.executors", "reorders": "serve.reorders", "drain-timeout": "serve.drain_timeout",
		"workdir": "serve.workdir", "test-tools": "serve.test_tools", "max-concurrency": "max_tool_use_concurrency",
		"cluster": "cluster.name", "cluster-listen": "cluster.listen", "routes": "cluster.routes",
		"server-name": "cluster.server_name", "domain": "cluster.domain", "replicas": "cluster.replicas",
	}
	proxyKeys = map[string]string{
		"listen": "proxy.listen", "upstream": "proxy.upstream", "format": "proxy.format",
		"tenant": "proxy.tenant", "max-concurrency": "proxy.max_concurrency",
	}
	// bindings are the commands that take settings, by their name below
	// the root (a subcommand's settings are its parent's). loadtest takes
	// flags only: a benchmark's target should not come from a deployment's
	// environment.
	bindings = map[string]map[string]string{
		"serve":  merge(natsKeys, logKeys, serveKeys),
		"proxy":  merge(natsKeys, logKeys, proxyKeys),
		"run":    merge(natsKeys, map[string]string{"max-concurrency": "max_tool_use_concurrency"}),
		"cancel": natsKeys, "top": natsKeys, "dlq": natsKeys,
		"tools": {},
	}
)

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		maps.Copy(out, m)
	}
	return out
}

// bound is what binding found: the configuration file and where each
// setting of the command came from.
type bound struct {
	file string
	cfg  *config.Config
	// from are the settings' values and sources ("flag --listen", "env
	// TOOLWIRE_SERVE_LISTEN", "file", "default"), by key.
	from map[string]config.Sourced[string]
}

// bindCommand applies the settings of cmd, a command of the root, to its
// flags; a command that takes none is left alone.
func bindCommand(cmd *cobra.Command) error {
	name := cmd
	for name.HasParent() && name.Parent().HasParent() {
		name = name.Parent()
	}
	keys, ok := bindings[name.Name()]
	if !ok || name == cmd.Root() {
		return nil
	}
	_, err := bindFlags(cmd.Flags(), keys)
	return err
}

// bindFlags sets each flag of fs named in keys that the command line did
// not give from its setting's variable, else from the configuration file
// (--config, else $TOOLWIRE_CONFIG); the file's name is also set into
// --config when it came from the variable.
func bindFlags(fs *pflag.FlagSet, keys map[string]string) (*bound, error) {
	b := &bound{from: map[string]config.Sourced[string]{}}
	cf := fs.Lookup("config")
	switch v := os.Getenv(envConfig); {
	case cf != nil && cf.Changed:
		b.file = cf.Value.String()
	case v != "":
		b.file = v
		if cf != nil {
			if err := fs.Set("config", v); err != nil {
				return nil, fmt.Errorf("%s: %w", envConfig, err)
			}
		}
	}
	if b.file != "" {
		cfg, err := config.Load(b.file)
		if err != nil {
			return nil, err
		}
		b.cfg = cfg
	}
	for _, name := range slices.Sorted(maps.Keys(keys)) {
		f := fs.Lookup(name)
		s, ok := config.Lookup(keys[name])
		if f == nil || !ok {
			return nil, fmt.Errorf("internal: flag --%s or setting %s missing", name, keys[name])
		}
		if f.Changed {
			b.from[s.Key] = config.Sourced[string]{Value: f.Value.String(), From: "flag --" + name}
			continue
		}
		v, from, err := resolve(s, b.cfg)
		if err != nil {
			return nil, err
		}
		if from != "default" {
			if err := fs.Set(name, v); err != nil {
				return nil, fmt.Errorf("%s: --%s %q: %w", from, name, v, err)
			}
		} else {
			v = f.Value.String()
		}
		b.from[s.Key] = config.Sourced[string]{Value: v, From: from}
	}
	return b, nil
}

// resolve is the value of the scalar setting s that no flag gives: its
// variable's, else the file's (cfg may be nil), else its default; with
// where it came from. A bad variable is an error naming it and why.
func resolve(s config.Setting, cfg *config.Config) (value, from string, err error) {
	if v, ok := os.LookupEnv(s.Var); ok && (v != "" || s.Kind == config.KindString) {
		canon, err := s.ParseText(v)
		if err != nil {
			return "", "", fmt.Errorf("%s=%q: %v", s.Var, v, err)
		}
		return canon, "env " + s.Var, nil
	}
	if v, ok := cfg.FileValue(s.Key); ok {
		return v, "file", nil
	}
	return s.Default, "default", nil
}

// envOverrides lays the variables of the structured settings (deny,
// permissions, limits, ...: JSON text) over cfg (nil: no file).
func envOverrides(cfg *config.Config) (*config.Config, error) {
	for _, s := range config.Settings() {
		v := os.Getenv(s.Var)
		if s.Kind != config.KindJSON || v == "" {
			continue
		}
		next, err := cfg.Override(s.Key, []byte(v))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Var, err)
		}
		cfg = next
	}
	return cfg, nil
}

// addConfigFlags gives each command of root that takes settings a
// --config flag, unless it has one.
func addConfigFlags(root *cobra.Command) {
	for _, c := range root.Commands() {
		if _, ok := bindings[c.Name()]; !ok || c.Flags().Lookup("config") != nil || c.PersistentFlags().Lookup("config") != nil {
			continue
		}
		c.PersistentFlags().String("config", "", "configuration file, YAML or JSON (docs/configuration.md; default $"+envConfig+")")
	}
}
