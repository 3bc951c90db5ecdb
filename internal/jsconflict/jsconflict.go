// Package jsconflict tells a compare-and-set publish that lost (the
// subject's last sequence was not the one expected) from other failures.
// The lease and the reorder stage both append with an expected sequence.
package jsconflict

import (
	"errors"

	"github.com/nats-io/nats.go/jetstream"
)

// Is reports whether a publish failed its expected-last-sequence check, by
// the server's error code: 10071 on a single node, 10164 on a replicated
// stream (nats.go's own constants), never by the message text.
func Is(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
	}
	return false
}
