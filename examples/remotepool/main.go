// Command remotepool is a remote executor pool: a Go program that links
// the executor package, registers a tool of its own and joins the pipeline
// over NATS. While it runs, its workers advertise the tool in TW_TOOLS and
// the router sends the tool's calls here; when it stops, the router answers
// them "no worker for tool WordCount" at once.
//
//	toolwire serve &                               # NATS on 127.0.0.1:4222 and every stage
//	go run ./examples/remotepool -nats nats://127.0.0.1:4222
//	toolwire run --nats nats://127.0.0.1:4222 --format anthropic --stream calls.sse
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
)

// wordCount is the pool's own tool: it counts the words, lines and
// characters of a text. It only reads, so its calls run side by side.
func wordCount() *tool.Tool {
	return tool.MustBuild(tool.Definition{
		Name:        "WordCount",
		Description: "Count the words, lines and characters of a text.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"The text to count."}},"required":["text"],"additionalProperties":false}`),
		Call: func(_ context.Context, input json.RawMessage, _ tool.TurnContext, _ tool.Progress) (tool.Result, error) {
			var in struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(input, &in); err != nil {
				return tool.Result{}, err
			}
			lines := strings.Count(in.Text, "\n")
			if in.Text != "" && !strings.HasSuffix(in.Text, "\n") {
				lines++
			}
			host, _ := os.Hostname()
			return tool.Result{Content: fmt.Sprintf("%d words, %d lines, %d characters (counted by pid %d on %s)",
				len(strings.Fields(in.Text)), lines, len([]rune(in.Text)), os.Getpid(), host)}, nil
		},
		ConcurrencySafe: tool.Always,
		ReadOnly:        tool.Always,
	})
}

func main() {
	natsURL := flag.String("nats", nats.DefaultURL, "NATS server of the pipeline")
	pool := flag.String("pool", "examples", "the pool this program serves")
	workers := flag.Int("workers", 1, "executor workers in this process")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(*natsURL, *pool, *workers, log); err != nil {
		log.Error("remotepool", "err", err)
		os.Exit(1)
	}
}

func run(natsURL, pool string, workers int, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	nc, err := nats.Connect(natsURL, nats.Name("remotepool-"+pool), nats.MaxReconnects(-1))
	if err != nil {
		return fmt.Errorf("connect %s: %w", natsURL, err)
	}
	defer nc.Drain()
	space := subjects.Default()
	if err := pipeline.Provision(ctx, nc, space); err != nil {
		return err
	}
	reg, err := tool.NewRegistry(wordCount())
	if err != nil {
		return err
	}
	errs := make(chan error, workers)
	for range workers {
		e, err := executor.New(ctx, nc, executor.Config{Space: space, Pool: pool, Tools: reg, Log: log})
		if err != nil {
			return err
		}
		log.Info("serving", "pool", pool, "worker", e.WorkerID(), "tools", "WordCount")
		go func() { errs <- e.Run(ctx) }()
	}
	for range workers {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}
