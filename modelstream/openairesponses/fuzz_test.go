package openairesponses

import (
	"strings"
	"testing"

	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
)

func FuzzParse(f *testing.F) {
	streamtest.AddFixtureSeeds(f, fixtureDir, fixturePattern)
	for _, tt := range synthCases {
		data, _ := frame(tt.Events)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		streamtest.CheckFuzzInput(t, parse, data, fuzzChecks)
	})
}

// fuzzChecks are this format's checks of any input.
var fuzzChecks = streamtest.FuzzChecks{AtAfterStart: true, ErrOK: func(err string) bool { return strings.Contains(err, "tool") }}

// TestFuzzSeedsExist makes sure the fuzz seeds are not silently empty.
func TestFuzzSeedsExist(t *testing.T) {
	streamtest.CheckFuzzSeedsExist(t, fixtureDir, fixturePattern, fixturePattern)
}
