package config

import "time"

// The process settings: one section per concern, each field a scalar with
// its default (the `default` tag, the same as its flag's) and its check
// (the `check` tag, see checks). The key of a field is its section's key,
// a dot and its own ("serve.drain_timeout"); its variable is TOOLWIRE_ and
// the key in capitals with the dot an underscore (TOOLWIRE_SERVE_DRAIN_TIMEOUT).
// The doc comments are the reference in docs/configuration.md, which a
// test keeps equal to them.

// NATS is how a command connects to NATS and signs in (the flags --nats,
// --user, --password, ...). The nats CLI's own NATS_* variables are read
// last, when nothing else sets a setting.
type NATS struct {
	// URL is the NATS server (or servers, comma-separated) to connect to.
	// For serve, empty runs an embedded server instead; for the other
	// commands, empty is nats://127.0.0.1:4222 (run and loadtest: a private
	// pipeline).
	URL string `json:"url" default:"" secret:"urls"`
	// User is the NATS user to sign in as.
	User string `json:"user" default:""`
	// Password is the NATS user's password.
	Password string `json:"password" default:"" secret:"true"`
	// Token is a NATS authentication token.
	Token string `json:"token" default:"" secret:"true"`
	// NKey is a file holding an NKey seed to sign in with.
	NKey string `json:"nkey" default:""`
	// Creds is a NATS user credentials file (JWT and seed).
	Creds string `json:"creds" default:""`
	// TLSCert is the TLS client certificate file (with tlskey).
	TLSCert string `json:"tlscert" default:""`
	// TLSKey is the TLS client key file (with tlscert).
	TLSKey string `json:"tlskey" default:""`
	// TLSCA is a CA file to verify the NATS server's certificate with.
	TLSCA string `json:"tlsca" default:""`
	// TLSFirst starts TLS before the NATS handshake (servers with
	// handshake_first).
	TLSFirst bool `json:"tlsfirst" default:"false"`
	// InboxPrefix is the prefix of reply subjects, which a tenant's user
	// must use (toolwire auth tenant add): without it, replies would come
	// on _INBOX, which the tenant may not read.
	InboxPrefix string `json:"inbox_prefix" default:""`
}

// Log chooses the log lines of serve and proxy.
type Log struct {
	// Format is text (for people) or json (for a log pipeline).
	Format string `json:"format" default:"text" check:"logformat"`
	// Level is the least severe line logged: debug, info, warn or error.
	Level string `json:"level" default:"info" check:"loglevel"`
}

// Serve are the settings of `toolwire serve`.
type Serve struct {
	// Listen is the NATS client address of the embedded server.
	Listen string `json:"listen" default:"127.0.0.1:4222" check:"addr"`
	// Store is the JetStream storage directory of the embedded server.
	Store string `json:"store" default:"./toolwire-data"`
	// HTTP is the address of /healthz, /readyz and /metrics; empty serves
	// none (with nats.url set, none unless given).
	HTTP string `json:"http" default:"127.0.0.1:8090" check:"addr"`
	// API is the address of the HTTP API; empty serves none (with
	// nats.url set or stages none, none unless given). Off loopback it
	// needs the api tokens.
	API string `json:"api" default:"127.0.0.1:8081" check:"addr"`
	// NATSConfig is a nats-server configuration file for the embedded
	// server: its accounts, users, authorization and TLS.
	NATSConfig string `json:"nats_config" default:""`
	// NATSLogs logs what the embedded NATS server does, on stderr.
	NATSLogs bool `json:"nats_logs" default:"false"`
	// Stages are the stages this process runs, comma-separated: any of
	// router, executor, reorder; none runs NATS only.
	Stages string `json:"stages" default:"router,executor,reorder" check:"stages"`
	// Executors is the number of executor workers.
	Executors int `json:"executors" default:"2" check:"positive"`
	// Reorders is the number of reorder instances.
	Reorders int `json:"reorders" default:"1" check:"positive"`
	// DrainTimeout is how long running calls may finish on SIGTERM before
	// they are handed back to the other workers.
	DrainTimeout time.Duration `json:"drain_timeout" default:"20s" check:"positive"`
	// WorkDir is the working directory of calls whose turn names none
	// (empty: the current directory).
	WorkDir string `json:"workdir" default:""`
	// TestTools also registers the test tools Noop and Sleep.
	TestTools bool `json:"test_tools" default:"false"`
}

// Cluster makes serve's embedded server a member of a NATS cluster.
type Cluster struct {
	// Name is the NATS cluster the embedded server joins (with routes);
	// empty: none.
	Name string `json:"name" default:""`
	// Listen is where the embedded server takes routes from the cluster's
	// other members.
	Listen string `json:"listen" default:"127.0.0.1:6222" check:"addr"`
	// Routes are the cluster URLs of the other members, comma-separated.
	Routes string `json:"routes" default:"" secret:"urls"`
	// ServerName is the embedded server's name, unique in its cluster
	// (empty: made from serve.listen).
	ServerName string `json:"server_name" default:""`
	// Domain is the JetStream domain of the embedded server.
	Domain string `json:"domain" default:""`
	// Replicas are the replicas of every stream and bucket, 1 to 5 (0: 3
	// on a cluster, 1 alone).
	Replicas int `json:"replicas" default:"0" check:"replicas"`
}

// Proxy are the settings of `toolwire proxy`.
type Proxy struct {
	// Listen is the address the proxy listens on.
	Listen string `json:"listen" default:"127.0.0.1:8081" check:"addr"`
	// Upstream is the base URL of the model API, e.g.
	// https://api.anthropic.com.
	Upstream string `json:"upstream" default:"" check:"httpurl" secret:"urls"`
	// Format is the stream format of the upstream (anthropic, openai-chat,
	// openai-responses, gemini, hermes).
	Format string `json:"format" default:""`
	// Tenant is the tenant of the proxy's turns.
	Tenant string `json:"tenant" default:"default" check:"tenant"`
	// MaxConcurrency is the per-turn concurrency limit the proxy's turns
	// ask for (0: the router's).
	MaxConcurrency int `json:"max_concurrency" default:"0" check:"nonnegative"`
}
