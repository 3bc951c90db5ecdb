package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/coercion"
	"github.com/toolwire/toolwire/schemas"
)

// remoteTool is a tool hosted by a remote pool, as its workers advertise it.
type remoteTool struct {
	ad     *schemas.ToolAd
	schema *coercion.Schema
	// workers advertising it, by TW_TOOLS key.
	workers map[string]bool
}

// catalog follows TW_TOOLS: which pools' live workers host which tools.
// It is fed by a KV watch, so the router knows a pool lost its last worker
// as soon as the advertisement is withdrawn or expires, and answers calls
// for that tool at once instead of queueing them for nobody.
type catalog struct {
	mu    sync.RWMutex
	tools map[string]*remoteTool
	// gone remembers tools that were advertised once, to tell "no worker
	// for tool X" from "no such tool".
	gone map[string]bool
	// keyTool maps each advertisement key seen to its tool, for deletes.
	keyTool map[string]string
	ready   chan struct{}
}

func newCatalog() *catalog {
	return &catalog{tools: map[string]*remoteTool{}, gone: map[string]bool{}, keyTool: map[string]string{}, ready: make(chan struct{})}
}

// refresh reads the latest advertisement of one tool straight from the
// bucket's stream (one direct get by subject filter, no consumer): a call
// for a tool the watch has not shown yet — a pool that started an instant
// ago — is routed rather than answered "no such tool". Only calls of
// unknown tools pay for it.
func (c *catalog) refresh(ctx context.Context, s jetstream.Stream, filter, prefix string) {
	m, err := s.GetLastMsgForSubject(ctx, filter)
	if err != nil || m.Header.Get("KV-Operation") != "" || len(m.Subject) <= len(prefix) {
		// Nothing, or the last word on it was a delete or purge.
		return
	}
	c.put(m.Subject[len(prefix):], m.Data)
}

// watch applies TW_TOOLS changes until ctx ends.
func (c *catalog) watch(ctx context.Context, kv jetstream.KeyValue) error {
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("router: watch tools: %w", err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Updates():
			if !ok {
				return errors.New("router: tools watch ended")
			}
			if e == nil {
				close(c.ready)
				continue
			}
			c.apply(e)
		}
	}
}

func (c *catalog) apply(e jetstream.KeyValueEntry) {
	if e.Operation() == jetstream.KeyValuePut {
		c.put(e.Key(), e.Value())
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := e.Key()
	name, ok := c.keyTool[key]
	if !ok {
		return
	}
	delete(c.keyTool, key)
	if rt := c.tools[name]; rt != nil {
		delete(rt.workers, key)
		if len(rt.workers) == 0 {
			delete(c.tools, name)
			c.gone[name] = true
		}
	}
}

// put records the advertisement stored under key.
func (c *catalog) put(key string, value []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ad, err := schemas.DecodeToolAd(value)
	if err != nil {
		return
	}
	c.keyTool[key] = ad.Name
	rt := c.tools[ad.Name]
	if rt == nil || string(rt.ad.InputSchema) != string(ad.InputSchema) {
		s, err := coercion.Compile(json.RawMessage(ad.InputSchema))
		if err != nil {
			return
		}
		workers := map[string]bool{}
		if rt != nil {
			workers = rt.workers
		}
		rt = &remoteTool{ad: ad, schema: s, workers: workers}
		c.tools[ad.Name] = rt
	}
	rt.ad = ad
	rt.workers[key] = true
	delete(c.gone, ad.Name)
}

// lookup finds a remote tool; gone says it was hosted once but has no live
// worker now.
func (c *catalog) lookup(name string) (rt *remoteTool, gone bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.tools[name], c.gone[name]
}
