package openaichat

import (
	"io"
	"testing"

	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
)

// fixtureDir is where the recorded streams live (provenance in its SOURCES.md).
const fixtureDir = "../../testdata/streams"

// fixturePattern selects this format's captures in fixtureDir.
const fixturePattern = "openai_chat_*"

// loadFixture returns a fixture's bytes.
func loadFixture(t testing.TB, name string) []byte {
	t.Helper()
	return streamtest.LoadFixture(t, fixtureDir, name)
}

// result is everything a Handler heard from one Parse.
type result = streamtest.Result

// contract is what streamtest.CheckContract checks of this format's streams.
// Calls are reported in Seq order, but one that closes before an earlier
// one keeps its own At, so At need not grow from call to call.
var contract = streamtest.Contract{Named: true}

// parse runs the parser over r and checks the contract every stream must
// keep (see streamtest.Parse).
func parse(t testing.TB, r io.Reader) *result {
	t.Helper()
	return streamtest.Parse(t, New(), r, contract)
}

func checkContract(t testing.TB, res *result) {
	t.Helper()
	streamtest.CheckContract(t, res, contract)
}

// frame builds a stream from events; see streamtest.Frame.
func frame(events []string) ([]byte, []int64) { return streamtest.Frame(events) }
