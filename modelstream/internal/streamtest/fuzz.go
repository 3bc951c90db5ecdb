package streamtest

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"reflect"
	"testing"
	"testing/iotest"
)

// AddFixtureSeeds adds each fixture in dir matching pattern to f's corpus.
func AddFixtureSeeds(f *testing.F, dir, pattern string) {
	f.Helper()
	if names, err := filepath.Glob(filepath.Join(dir, pattern)); err == nil {
		for _, name := range names {
			f.Add(LoadFixture(f, dir, filepath.Base(name)))
		}
	}
}

// CheckFuzzSeedsExist makes sure the fuzz seeds, the label fixtures in dir
// matching pattern, are not silently empty.
func CheckFuzzSeedsExist(t *testing.T, dir, pattern, label string) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(names) == 0 {
		t.Fatalf("no %s fixtures in %s (err %v)", label, dir, err)
	}
}

// FuzzChecks selects the format's own checks in CheckFuzzInput.
type FuzzChecks struct {
	// AtAfterStart: a call's At is past byte 0, not just at or past it.
	AtAfterStart bool
	// Named: a complete call has a name.
	Named bool
	// ErrOK reports whether an incomplete call's Err is worded as it must be.
	ErrOK func(err string) bool
}

// CheckFuzzInput parses any data: every call's At must fall in the input, a
// complete call's Input must be a JSON object, an incomplete call's Err
// must pass fc.ErrOK, and one byte at a time must give the same result.
func CheckFuzzInput(t *testing.T, parse func(testing.TB, io.Reader) *Result, data []byte, fc FuzzChecks) {
	t.Helper()
	want := parse(t, bytes.NewReader(data))
	for _, c := range want.Calls {
		if c.At < 0 || fc.AtAfterStart && c.At == 0 || c.At > int64(len(data)) {
			t.Fatalf("call %d At %d outside the input of %d bytes", c.Seq, c.At, len(data))
		}
		if c.Complete {
			var obj map[string]any
			if err := json.Unmarshal(c.Input, &obj); err != nil || obj == nil {
				t.Fatalf("complete call %d has Input %q that is not a JSON object: %v", c.Seq, c.Input, err)
			}
			if fc.Named && c.Name == "" {
				t.Fatalf("complete call %d has no name", c.Seq)
			}
		}
		if !c.Complete && !fc.ErrOK(c.Err) {
			t.Fatalf("incomplete call %d has Err %q", c.Seq, c.Err)
		}
	}
	if got := parse(t, iotest.OneByteReader(bytes.NewReader(data))); !reflect.DeepEqual(got, want) {
		t.Fatalf("one byte at a time:\n got %+v\nwant %+v", got, want)
	}
}
