package stage_test

import (
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/stage"
)

func TestBackoffDelay(t *testing.T) {
	ms := time.Millisecond
	b := stage.Backoff{Initial: 10 * ms, Max: time.Second, Factor: 2}
	for _, c := range []struct {
		b         stage.Backoff
		delivered int
		want      time.Duration
	}{
		{b, 0, 10 * ms},
		{b, 1, 10 * ms},
		{b, 2, 20 * ms},
		{b, 3, 40 * ms},
		{b, 7, 640 * ms},
		{b, 8, time.Second}, // 1280 ms, capped
		{b, 20, time.Second},
		{b, 1 << 20, time.Second}, // no overflow however many deliveries
		{stage.Backoff{Initial: 100 * ms, Max: time.Second, Factor: 1.5}, 3, 225 * ms},
		{stage.Backoff{Initial: 100 * ms, Max: time.Second, Factor: 1}, 10, 100 * ms},
		{stage.Backoff{Initial: 2 * time.Second, Max: time.Second, Factor: 2}, 1, time.Second}, // Initial over Max
		{stage.Backoff{}.WithDefaults(), 1, stage.DefaultBackoffInitial},
		{stage.Backoff{}.WithDefaults(), 2, 2 * stage.DefaultBackoffInitial},
		{stage.Backoff{}.WithDefaults(), 20, stage.DefaultBackoffMax},
	} {
		if got := c.b.Delay(c.delivered); got != c.want {
			t.Errorf("%+v.Delay(%d) = %v, want %v", c.b, c.delivered, got, c.want)
		}
	}
}

func TestBackoffWithDefaults(t *testing.T) {
	def := stage.Backoff{Initial: stage.DefaultBackoffInitial, Max: stage.DefaultBackoffMax, Factor: stage.DefaultBackoffFactor}
	for _, c := range []struct{ in, want stage.Backoff }{
		{stage.Backoff{}, def},
		{stage.Backoff{Initial: -time.Second, Max: -1, Factor: -2}, def},
		{stage.Backoff{Factor: 0.5}, def}, // a factor under 1 would shrink the delays
		{stage.Backoff{Initial: time.Millisecond}, stage.Backoff{Initial: time.Millisecond, Max: stage.DefaultBackoffMax, Factor: stage.DefaultBackoffFactor}},
		{stage.Backoff{Max: time.Minute}, stage.Backoff{Initial: stage.DefaultBackoffInitial, Max: time.Minute, Factor: stage.DefaultBackoffFactor}},
		{stage.Backoff{Factor: 3}, stage.Backoff{Initial: stage.DefaultBackoffInitial, Max: stage.DefaultBackoffMax, Factor: 3}},
		{stage.Backoff{Initial: time.Second, Max: time.Hour, Factor: 1}, stage.Backoff{Initial: time.Second, Max: time.Hour, Factor: 1}},
	} {
		if got := c.in.WithDefaults(); got != c.want {
			t.Errorf("%+v.WithDefaults() = %+v, want %+v", c.in, got, c.want)
		}
	}
}
