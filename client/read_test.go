package client

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/subjects"
)

// TestReadBySubject: lastMsg and readFrom read one subject's messages the
// same whether the stream answers direct gets or not (a replicated stream
// does not: lastMsg then reads through a consumer), and leave no consumer.
func TestReadBySubject(t *testing.T) {
	srv, err := embedded.Start(embedded.Options{StoreDir: t.TempDir(), MaxMemory: 64 << 20, MaxStore: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	nc, err := srv.Connect("read")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := New(nc, Config{Space: subjects.Default()})
	if err != nil {
		t.Fatal(err)
	}
	for _, direct := range []bool{false, true} {
		name := fmt.Sprintf("S_%v", direct)
		s, err := c.js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{name + ".>"}, AllowDirect: direct})
		if err != nil {
			t.Fatal(err)
		}
		for i, subj := range []string{"a", "b", "a", "a", "b"} {
			if _, err := c.js.Publish(ctx, name+"."+subj, []byte(fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
		}
		last, err := c.lastMsg(ctx, name, name+".a")
		if err != nil || last.seq != 4 || string(last.data) != "3" {
			t.Errorf("direct %v: last of a: %+v, %v; want seq 4", direct, last, err)
		}
		if _, err := c.lastMsg(ctx, name, name+".c"); !errors.Is(err, jetstream.ErrMsgNotFound) {
			t.Errorf("direct %v: last of c: %v, want ErrMsgNotFound", direct, err)
		}
		var got []uint64
		err = c.readFrom(ctx, name, name+".a", 2, false, func(m *stored) error { got = append(got, m.seq); return nil })
		if err != nil || fmt.Sprint(got) != "[3 4]" {
			t.Errorf("direct %v: a from 2: %v, %v; want [3 4]", direct, got, err)
		}
		info, err := s.Info(ctx)
		if err != nil || info.State.Consumers != 0 {
			t.Errorf("direct %v: %v consumers left after the reads (%v)", direct, info.State.Consumers, err)
		}
	}
}
