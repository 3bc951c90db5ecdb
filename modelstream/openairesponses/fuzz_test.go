package openairesponses

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func FuzzParse(f *testing.F) {
	if names, err := filepath.Glob(filepath.Join(fixtureDir, fixturePattern)); err == nil {
		for _, name := range names {
			f.Add(loadFixture(f, filepath.Base(name)))
		}
	}
	for _, tt := range synthCases {
		data, _ := frame(tt.events)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want := parse(t, bytes.NewReader(data))
		for _, c := range want.Calls {
			if c.At <= 0 || c.At > int64(len(data)) {
				t.Fatalf("call %d At %d outside the input of %d bytes", c.Seq, c.At, len(data))
			}
			if c.Complete {
				var obj map[string]any
				if err := json.Unmarshal(c.Input, &obj); err != nil || obj == nil {
					t.Fatalf("complete call %d has Input %q that is not a JSON object: %v", c.Seq, c.Input, err)
				}
			}
			if !c.Complete && !strings.Contains(c.Err, "tool") {
				t.Fatalf("incomplete call %d has Err %q", c.Seq, c.Err)
			}
		}
		if got := parse(t, iotest.OneByteReader(bytes.NewReader(data))); !reflect.DeepEqual(got, want) {
			t.Fatalf("one byte at a time:\n got %+v\nwant %+v", got, want)
		}
	})
}

// TestFuzzSeedsExist makes sure the fuzz seeds are not silently empty.
func TestFuzzSeedsExist(t *testing.T) {
	names, err := filepath.Glob(filepath.Join(fixtureDir, fixturePattern))
	if err != nil || len(names) == 0 {
		if _, statErr := os.Stat(fixtureDir); statErr != nil {
			t.Skipf("fixtures folder %s not found: %v", fixtureDir, statErr)
		}
		t.Fatalf("no %s fixtures in %s (err %v)", fixturePattern, fixtureDir, err)
	}
}
