package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/loadtest"
)

// record captures the turns a client submits to a `toolwire serve`
// process; two replays of the log give the same calls and call mix.
func TestLoadtestRecordReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs toolwire serve, record and two replays")
	}
	bin := sharedBinary(t)
	s := startServe(t)
	dir := t.TempDir()
	logFile := filepath.Join(dir, "turns.jsonl")
	rec := exec.Command(bin, "loadtest", "record", "--nats", s.nc.ConnectedUrl(), "--out", logFile, "--turns", "4", "--duration", "60s")
	rec.Stderr = os.Stderr
	var recOut strings.Builder
	rec.Stdout = &recOut
	if err := rec.Start(); err != nil {
		t.Fatal(err)
	}
	recDone := make(chan error, 1)
	go func() { recDone <- rec.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Turns until the recorder has seen four: it may subscribe after the
	// first ones.
	var recErr error
submit:
	for k := 0; ; k++ {
		select {
		case recErr = <-recDone:
			break submit
		case <-ctx.Done():
			t.Fatal("record never stopped")
		default:
		}
		id := client.NewTurnID()
		calls := []client.Call{{Name: "Noop", Input: json.RawMessage(`{"n":1}`)}, {Name: "Sleep", Input: json.RawMessage(fmt.Sprintf(`{"ms":%d,"safe":false}`, 1+k%3))}}
		if err := s.cl.SubmitCalls(ctx, id, calls, client.TurnOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, err := range s.cl.Results(ctx, id) {
			if err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if recErr != nil {
		t.Fatalf("record: %v\n%s", recErr, recOut.String())
	}
	if !strings.Contains(recOut.String(), "of 4 turns") {
		t.Errorf("record: %s", recOut.String())
	}
	mix := regexp.MustCompile(`call mix .*`)
	var calls []float64
	var mixes []string
	plots := filepath.Join(dir, "charts")
	for i, args := range [][]string{{"--max", "--plot", plots}, {"--speed", "2", "--nats", s.nc.ConnectedUrl()}} {
		file := filepath.Join(dir, fmt.Sprintf("report%d.json", i))
		out, err := exec.Command(bin, append([]string{"loadtest", "replay", logFile, "--json", file, "--quiet"}, args...)...).Output()
		if err != nil {
			t.Fatalf("replay %v: %v\n%s", args, err, out)
		}
		t.Logf("replay %v:\n%s", args, out)
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var rep map[string]any
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		if rep["lost"].(float64) != 0 || rep["turns"].(float64) != 4 {
			t.Errorf("replay %v: %s", args, b)
		}
		calls = append(calls, rep["calls"].(float64))
		mixes = append(mixes, mix.FindString(string(out)))
	}
	if calls[0] != 8 || calls[1] != calls[0] || mixes[0] != "call mix      Noop 4  Sleep 4" || mixes[1] != mixes[0] {
		t.Errorf("replays differ: calls %v, mixes %q", calls, mixes)
	}
	checkCharts(t, plots, loadtest.PlotLatencyHist, loadtest.PlotLatencyTime, loadtest.PlotThroughput)
}

func TestLoadtestRecordReplayUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"record", "--out", "x.jsonl"}, "--nats"},
		{[]string{"record", "--nats", "nats://127.0.0.1:1"}, "--out"},
		{[]string{"record", "--nats", "nats://127.0.0.1:1", "--out", "x", "--turns", "-1"}, "--turns"},
		{[]string{"record", "--nats", "nats://127.0.0.1:1", "--out", "x", "--duration", "-1s"}, "--duration"},
		{[]string{"replay", "x.jsonl", "--speed", "0"}, "--speed"},
		{[]string{"replay", "x.jsonl", "--speed", "2", "--max"}, "--max"},
		{[]string{"replay", "x.jsonl", "--loop", "0"}, "--loop"},
		{[]string{"replay", "x.jsonl", "--speed", "fast"}, "--speed"},
		{[]string{"replay"}, "FILE"},
	} {
		cmd := newRoot()
		cmd.SetArgs(append([]string{"loadtest"}, c.args...))
		err := cmd.Execute()
		ee, ok := err.(*exitError)
		if !ok || ee.code != exitUsage || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("%v: got %v, want a usage error naming %s", c.args, err, c.flag)
		}
	}
}

// A bad line of a log is named by its number.
func TestLoadtestReplayBadLog(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(file, []byte("{\"offset_ms\":0}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := newRoot()
	cmd.SetArgs([]string{"loadtest", "replay", file})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "line 1: event") {
		t.Errorf("got %v", err)
	}
}
