package anthropic

import (
	"strings"
	"testing"

	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
)

func FuzzParse(f *testing.F) {
	streamtest.AddFixtureSeeds(f, fixtureDir, "anthropic_*")
	for _, events := range [][]string{
		{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{"x":`), overloaded},
		{msgStart, toolStart(1, "toolu_a", "f"), toolStart(2, "", "g"), inputDelta(2, `{}`), stop(2), stop(1), msgStop},
		{msgStart, msgStart2, "event: error\ndata: nope\n\n"},
	} {
		data, _ := frame(events)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		streamtest.CheckFuzzInput(t, parse, data, fuzzChecks)
	})
}

// fuzzChecks are this format's checks of any input.
var fuzzChecks = streamtest.FuzzChecks{ErrOK: func(err string) bool { return strings.Contains(err, "tool") }}

// TestFuzzSeedsExist makes sure the fuzz seeds are not silently empty.
func TestFuzzSeedsExist(t *testing.T) {
	streamtest.CheckFuzzSeedsExist(t, fixtureDir, "anthropic_*", "anthropic")
}
