package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/internal/health"
	"github.com/toolwire/toolwire/internal/metrics"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/internal/stage"
	"github.com/toolwire/toolwire/internal/toolset"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
)

func newServe() *cobra.Command {
	var (
		listen, store, workdir, natsURL, stages string
		configFile, httpAddr, apiAddr           string
		testTools                               bool
		executors, reorders                     int
		maxConc                                 int
		drainTimeout                            time.Duration
		auth                                    natsAuth
		natsConfig                              string
		logs                                    logFlags
		cluster                                 clusterFlags
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the pipeline's stages (and, by default, an embedded NATS server) until SIGINT/SIGTERM",
		Long: `serve runs an embedded NATS server with JetStream and every stage, until SIGINT or
SIGTERM; then it drains and exits 0.

With --nats it joins an existing NATS server (or cluster) instead, and --stages picks
which stages this process runs: add executor processes with
  toolwire serve --nats nats://host:4222 --stages executor

With --cluster the embedded server joins a NATS cluster; three of them form a
JetStream cluster whose streams keep three replicas:
  toolwire serve --cluster tw --server-name n1 --listen 127.0.0.1:4222 \
    --cluster-listen 127.0.0.1:6222 --routes nats://127.0.0.1:6223,nats://127.0.0.1:6224 \
    --store ./n1 --stages none
(and n2, n3 alike); the stages then join with --nats nats://127.0.0.1:4222,nats://127.0.0.1:4223,...`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			mc, err := maxConcurrency(maxConc)
			if err != nil {
				return err
			}
			counts, err := stageCounts(stages, executors, reorders)
			if err != nil {
				return err
			}
			log, err := logs.logger(os.Stderr)
			if err != nil {
				return usageError("serve: %w", err)
			}
			if natsURL != "" && !cmd.Flags().Changed("http") {
				// Extra processes joining a pipeline (often several on one
				// machine) serve no endpoints unless asked.
				httpAddr = ""
			}
			if (natsURL != "" || counts == [3]int{-1, -1, -1}) && !cmd.Flags().Changed("api") {
				// Like the endpoints: a process joining a pipeline, or a
				// NATS member with no stages, serves an API only if asked.
				apiAddr = ""
			}
			var hs *health.Server
			if httpAddr != "" {
				if hs, err = health.Listen(httpAddr); err != nil {
					return err
				}
				defer hs.Close(context.Background())
			}
			cfg, err := loadConfig(configFile)
			if err != nil {
				return err
			}
			set, err := buildTools(cmd.Context(), cfg, toolset.Options{TestTools: testTools})
			if err != nil {
				return err
			}
			defer set.Close()
			authOpts, err := auth.options()
			if err != nil {
				return usageError("serve: %w", err)
			}
			dial := pipeline.Dialer(func(name string, opts ...nats.Option) (*nats.Conn, error) {
				return nats.Connect(natsURL, slices.Concat([]nats.Option{nats.Name(name)}, reconnect(), authOpts, opts)...)
			})
			where := natsURL
			if natsURL == "" {
				o := embedded.Options{StoreDir: store, Listen: listen, ConfigFile: natsConfig}
				if err := cluster.options(&o); err != nil {
					return err
				}
				srv, err := embedded.Start(o)
				if err != nil {
					return err
				}
				defer srv.Shutdown()
				// The stages sign in like any client when the file asks for it.
				dial = func(name string, opts ...nats.Option) (*nats.Conn, error) {
					return srv.Connect(name, slices.Concat(authOpts, opts)...)
				}
				where = srv.ClientURL()
			} else if cmd.Flags().Changed("cluster") {
				return fmt.Errorf("serve: --cluster makes the embedded server a member; with --nats none is embedded")
			}
			if counts == [3]int{-1, -1, -1} {
				if hs != nil {
					stop, err := readyAlone(hs, dial, apiAddr != "")
					if err != nil {
						return err
					}
					defer stop()
				}
				if apiAddr != "" {
					// An API alone in front of a pipeline served elsewhere
					// (--nats URL --stages none): its streams must exist.
					stop, err := startAPI(apiAddr, cfg, set, dial, log)
					if err != nil {
						return err
					}
					defer stop()
				}
				log.Info("toolwire serving NATS only", "nats", where, "cluster", cluster.name, "api", apiAddr)
				<-cmd.Context().Done()
				return nil
			}
			var hooks stage.Hooks
			if hs != nil {
				m, err := metrics.New(hs.Registerer())
				if err != nil {
					return fmt.Errorf("serve: metrics: %w", err)
				}
				hooks = m.Hooks()
			}
			tp, stopTracing, err := startTracing(cmd.Context(), log)
			if err != nil {
				return err
			}
			defer stopTracing()
			hooks.TracerProvider = tp
			p, err := pipeline.Start(cmd.Context(), dial, pipeline.Config{
				Space: subjects.Default(), Tools: set.Registry, Routers: counts[0], Executors: counts[1], Reorders: counts[2],
				MaxConcurrency: mc, WorkDir: workdir, Log: log, Executor: executor.Config{Policy: set.Policy, DrainTimeout: drainTimeout}, Limits: set.Limits,
				Provision: provision.Config{Replicas: cluster.replicas}, Hooks: hooks,
			})
			if err != nil {
				return err
			}
			if hs != nil {
				hs.Ready(p)
				stop, err := watchConsumers(hs, dial, counts)
				if err == nil {
					defer stop()
					err = watchStages(hs, p, set)
				}
				if err != nil {
					_ = p.Stop()
					return err
				}
			}
			// The API stops before the pipeline: uploads under way end (or
			// are cut and their turns discarded) while the stages run.
			var apiStop func()
			if apiAddr != "" {
				if apiStop, err = startAPI(apiAddr, cfg, set, dial, log); err != nil {
					_ = p.Stop()
					return err
				}
				defer func() {
					if apiStop != nil {
						apiStop()
					}
				}()
			}
			log.Info("toolwire serving", "nats", where, "stages", stages, "executors", len(p.Workers), "http", httpAddr)
			if counts[1] > 0 {
				bash := cfg.BashPolicy()
				c := bash.Containment()
				log.Info("Bash: "+c.Status, "backend", c.Backend, "strict", bash.Strict)
			}
			<-cmd.Context().Done()
			log.Info("draining")
			if apiStop != nil {
				apiStop()
				apiStop = nil
			}
			if err := p.Stop(); err != nil {
				return fmt.Errorf("serve: %w", err)
			}
			log.Info("stopped")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:4222", "NATS client address of the embedded server")
	f.StringVar(&store, "store", "./toolwire-data", "JetStream storage directory of the embedded server")
	f.StringVar(&httpAddr, "http", "127.0.0.1:8090", "address of /healthz, /readyz and /metrics (empty: none; with --nats, none unless given)")
	f.StringVar(&apiAddr, "api", "127.0.0.1:8081", "address of the HTTP API (empty: none; with --nats or --stages none, none unless given; off loopback it needs the configuration's API tokens)")
	f.StringVar(&natsURL, "nats", "", "join this NATS server instead of embedding one")
	f.StringVar(&natsConfig, "nats-config", "", "nats-server configuration file of the embedded server: its accounts, users, authorization and TLS (the stages then sign in with --user/--password, --creds, ...)")
	auth.register(f)
	logs.register(f)
	f.StringVar(&stages, "stages", "router,executor,reorder", "stages to run: any of router, executor, reorder; none: NATS only")
	f.StringVar(&workdir, "workdir", "", "working directory of calls whose turn names none (default: current)")
	f.StringVar(&configFile, "config", "", "configuration file, YAML or JSON: every setting, docs/configuration.md (default $TOOLWIRE_CONFIG)")
	f.BoolVar(&testTools, "test-tools", false, "also register the test tools Noop and Sleep")
	f.IntVar(&executors, "executors", 2, "executor workers")
	f.IntVar(&reorders, "reorders", 1, "reorder instances")
	f.DurationVar(&drainTimeout, "drain-timeout", executor.DefaultDrainTimeout, "on SIGTERM, how long running calls may finish before they are handed back to the other workers (read-only ones run again there, the rest are answered \"outcome unknown\")")
	f.IntVar(&maxConc, "max-concurrency", 0, "per-turn concurrency limit (default $TOOLWIRE_MAX_TOOL_USE_CONCURRENCY or 10)")
	cluster.register(cmd)
	return cmd
}

// watchConsumers serves the stage consumers' backlog on /metrics, read
// over a connection of its own at each scrape, and has /readyz check that
// the streams and the consumers of the stages this process runs exist.
func watchConsumers(hs *health.Server, dial pipeline.Dialer, counts [3]int) (stop func(), err error) {
	nc, err := dial("toolwire-metrics")
	if err != nil {
		return nil, fmt.Errorf("serve: metrics: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("serve: metrics: %w", err)
	}
	if err := hs.Registerer().Register(metrics.Consumers(js, subjects.Default())); err != nil {
		nc.Close()
		return nil, fmt.Errorf("serve: metrics: %w", err)
	}
	hs.ReadyWhen(func(ctx context.Context) error {
		return provision.Present(ctx, js, subjects.Default(), counts[0] > 0, counts[1] > 0, counts[2] > 0)
	})
	return nc.Close, nil
}

// stageCounts turns --stages into instance counts (router, executor,
// reorder); a stage left out runs no instance, and "none" runs none.
func stageCounts(stages string, executors, reorders int) ([3]int, error) {
	known := []string{"router", "executor", "reorder"}
	counts := [3]int{-1, -1, -1}
	if strings.TrimSpace(stages) == "none" {
		return counts, nil
	}
	for _, s := range strings.Split(stages, ",") {
		s = strings.TrimSpace(s)
		i := slices.Index(known, s)
		if i < 0 {
			return counts, fmt.Errorf("serve: --stages: unknown stage %q (known: %s)", s, strings.Join(known, ", "))
		}
		counts[i] = []int{1, executors, reorders}[i]
		if counts[i] <= 0 {
			return counts, fmt.Errorf("serve: --stages includes %s but its count is %d", s, counts[i])
		}
	}
	return counts, nil
}
