package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// readJSON decodes r's JSON body into dst, refusing unknown fields, a body
// over the limit and one that is not JSON. An empty body leaves dst as it
// is when optional.
func (a *API) readJSON(w http.ResponseWriter, r *request, dst any, optional bool) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.cfg.MaxBodyBytes))
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return nil
		}
		return problemf(kindBadRequest, "the body is empty: want a JSON object")
	}
	// A body must say it is JSON: a web page can send a body without
	// asking only as text or a form, or with no type at all.
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return problemf(kindMediaType, "Content-Type is %q: send the body as application/json", ct)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return problemf(kindBadRequest, "the body is not the JSON this path takes: %s", jsonWhere(err, body))
	}
	if dec.More() {
		return problemf(kindBadRequest, "the body has more after its JSON object (at byte %d)", dec.InputOffset())
	}
	return nil
}

// jsonWhere says what encoding/json found wrong and where, by line and
// column.
func jsonWhere(err error, body []byte) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	off := int64(-1)
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 {
		return err.Error()
	}
	off = min(off, int64(len(body)))
	line := bytes.Count(body[:off], []byte("\n")) + 1
	col := off - int64(bytes.LastIndexByte(body[:off], '\n'))
	return fmt.Sprintf("%v (line %d, column %d)", err, line, col)
}

// intParam parses a whole number in [lo, hi] given as what: digits, with a
// minus sign when negative (no plus sign, no spaces), as the document has it.
func intParam(what, s string, lo, hi int) (int, error) {
	digits := strings.TrimPrefix(s, "-")
	n, err := strconv.Atoi(s)
	if err != nil || digits == "" || strings.Trim(digits, "0123456789") != "" || n < lo || n > hi {
		return 0, problemf(kindBadRequest, "%s is %q: want a whole number from %d to %d", what, s, lo, hi)
	}
	return n, nil
}
