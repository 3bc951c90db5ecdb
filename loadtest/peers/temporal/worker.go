package main

import (
	"fmt"
	"io"
	"log/slog"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TaskQueue is the task queue of the turns.
const TaskQueue = "toolwire-loadtest"

// WorkerConfig is how this process's worker is set up; zeros are the Go
// SDK's defaults.
type WorkerConfig struct {
	// WorkflowPollers and ActivityPollers are the worker's concurrent
	// pollers of workflow and activity tasks (SDK default 2 each; 1 is not
	// allowed for workflow tasks).
	WorkflowPollers, ActivityPollers int
	// Eager asks for eager workflow start (the first workflow task comes
	// back with the start, not through matching) and lets the server hand
	// activities back eagerly in the workflow task's answer
	// (system.enableActivityEagerExecution; the SDK asks by default).
	Eager bool
}

func (w WorkerConfig) check() error {
	if w.WorkflowPollers < 0 || w.WorkflowPollers == 1 {
		return fmt.Errorf("--workflow-pollers: want 0 (SDK default) or at least 2, got %d", w.WorkflowPollers)
	}
	if w.ActivityPollers < 0 {
		return fmt.Errorf("--activity-pollers: must not be negative, got %d", w.ActivityPollers)
	}
	return nil
}

// serverDynamicConfig is what w needs of the server's dynamic config.
func (w WorkerConfig) serverDynamicConfig() []string {
	if w.Eager {
		return []string{"system.enableActivityEagerExecution=true"}
	}
	return nil
}

// startWorker starts a worker of TaskQueue hosting Turn and Noop.
func startWorker(c client.Client, w WorkerConfig) (worker.Worker, error) {
	wk := worker.New(c, TaskQueue, worker.Options{
		MaxConcurrentWorkflowTaskPollers: w.WorkflowPollers,
		MaxConcurrentActivityTaskPollers: w.ActivityPollers,
	})
	wk.RegisterWorkflowWithOptions(Turn, workflow.RegisterOptions{Name: TurnWorkflowName})
	wk.RegisterActivityWithOptions(Noop, activity.RegisterOptions{Name: NoopActivityName})
	if err := wk.Start(); err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	return wk, nil
}

// quietLogger is the SDK's logger: warnings and errors only, to w
// (nothing when nil), so that the SDK's per-worker info lines do not mix
// with the summary.
func quietLogger(w io.Writer) log.Logger {
	if w == nil {
		w = io.Discard
	}
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn})))
}
