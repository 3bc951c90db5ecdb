package main

import "fmt"

// Tunings of the dev server and the worker.
const (
	// TuningStock is the dev server's and the Go SDK's defaults.
	TuningStock = "stock"
	// TuningTuned lifts the limits that throttle a one-node dev server
	// below what it can do (tunedDynamicConfig) and gives the worker
	// enough pollers for the load (tunedPollers).
	TuningTuned = "tuned"
)

// tunedDynamicConfig is the server side of TuningTuned; each setting is a
// limit sized for a cluster that a one-node dev server hits first.
var tunedDynamicConfig = []string{
	// The dev server has one history shard, and the transfer queue (which
	// hands a new workflow or activity task to matching) is read at most
	// this often per shard: 20 by default, so each hand-off waits up to
	// 50 ms, about 150 ms a turn of one call. A cluster has hundreds of
	// shards; one shard needs the limit lifted.
	"history.transferProcessorMaxPollRPS=10000",
	// A task queue has 4 partitions by default, for spreading it over
	// matching hosts; on one host a task landing in a partition without a
	// waiting poller is forwarded to the root at most 10 times a second,
	// one at a time. One partition needs no forwarding.
	"matching.numTaskqueueReadPartitions=1",
	"matching.numTaskqueueWritePartitions=1",
}

// tunedPollers is the worker's workflow and activity task pollers under
// TuningTuned: the SDK's 2 each leave most tasks waiting for a poller
// once 16 turns are in flight.
const tunedPollers = 16

// apply fills in c's server dynamic config and pollers for tuning t;
// settings given explicitly win, the dynamic config given coming after
// (so overriding) the tuning's.
func (t tuning) apply(c *Config) error {
	switch t {
	case TuningStock:
	case TuningTuned:
		c.Server.DynamicConfig = append(append([]string{}, tunedDynamicConfig...), c.Server.DynamicConfig...)
		if c.Worker.WorkflowPollers == 0 {
			c.Worker.WorkflowPollers = tunedPollers
		}
		if c.Worker.ActivityPollers == 0 {
			c.Worker.ActivityPollers = tunedPollers
		}
	default:
		return fmt.Errorf("--tuning: want %s or %s, got %q", TuningStock, TuningTuned, string(t))
	}
	return nil
}

// tuning is one of TuningStock and TuningTuned.
type tuning string
