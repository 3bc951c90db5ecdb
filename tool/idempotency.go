package tool

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
)

// IdempotencyEnv is the environment variable a Bash command finds its
// call's idempotency key in.
const IdempotencyEnv = "TOOLWIRE_IDEMPOTENCY_KEY"

// IdempotencyMeta is the _meta key an MCP server finds a call's
// idempotency key under.
const IdempotencyMeta = "dev.toolwire/idempotencyKey"

// IdempotencyKey is the key of one call for the services it has side
// effects on: derived from the call's tenant, turn, tool_use id, tool and
// a digest of its input, it is the same on every attempt of the call (a
// redelivery, a retry after a crash) and different for every other call,
// so a service that deduplicates on it performs the effect once. The input
// is taken in a canonical form (objects' keys sorted, no insignificant
// space, numbers as written), so that two spellings of the same arguments
// give the same key. It is "twk1_" and 32 hex digits (128 bits of SHA-256).
func IdempotencyKey(tenant, turn, toolUseID, toolName string, input json.RawMessage) string {
	h := sha256.New()
	for _, part := range []string{"toolwire idempotency v1", tenant, turn, toolUseID, toolName} {
		// Each part with its length: no two lists of parts write the same bytes.
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(part))))
		h.Write([]byte(part))
	}
	h.Write(canonical(input))
	return "twk1_" + hex.EncodeToString(h.Sum(nil)[:16])
}

// canonical is input in the canonical form IdempotencyKey digests; input
// that is not JSON is taken as it is (the router never dispatches such).
func canonical(input json.RawMessage) []byte {
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return input
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// Maps are written with their keys sorted, json.Number as written.
	if err := enc.Encode(v); err != nil {
		return input
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
