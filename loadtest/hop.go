package loadtest

import (
	"context"
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// hop measures a bare JetStream hop on the target's server: a publish to a
// stream of its own (file storage, as the pipeline's streams), awaiting the
// server's ack, until a pull consumer on that stream receives the message;
// one hop at a time. The stream is deleted afterwards.
func hop(ctx context.Context, nc *nats.Conn, hops int) (P50P99, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return P50P99{}, err
	}
	id := nuid.Next()
	name, subject := "TW_LOADTEST_HOP_"+id, "twloadtest.hop."+id
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subject}, Storage: jetstream.FileStorage, MaxMsgs: 10_000})
	if err != nil {
		return P50P99{}, fmt.Errorf("loadtest: hop stream: %w", err)
	}
	defer func() { _ = js.DeleteStream(context.WithoutCancel(ctx), name) }()
	cons, err := s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{AckPolicy: jetstream.AckNonePolicy})
	if err != nil {
		return P50P99{}, fmt.Errorf("loadtest: hop consumer: %w", err)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(64))
	if err != nil {
		return P50P99{}, fmt.Errorf("loadtest: hop consumer: %w", err)
	}
	defer it.Stop()
	got := make(chan error, 1)
	go func() {
		for {
			if _, err := it.Next(); err != nil {
				got <- err
				return
			}
			got <- nil
		}
	}()
	h := hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3)
	payload := []byte("hop")
	for range hops {
		t0 := time.Now()
		if _, err := js.Publish(ctx, subject, payload); err != nil {
			return P50P99{}, fmt.Errorf("loadtest: hop publish: %w", err)
		}
		select {
		case err := <-got:
			if err != nil {
				return P50P99{}, fmt.Errorf("loadtest: hop receive: %w", err)
			}
		case <-ctx.Done():
			return P50P99{}, ctx.Err()
		case <-time.After(10 * time.Second):
			return P50P99{}, fmt.Errorf("loadtest: a hop took over 10 s")
		}
		_ = h.RecordValue(Micros(time.Since(t0)))
	}
	return P50P99{ms(h, 50), ms(h, 99)}, nil
}
