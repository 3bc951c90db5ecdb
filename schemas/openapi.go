package schemas

import _ "embed"

// openAPI is the HTTP API's contract, kept beside the event schemas so that
// the API and the documents other languages generate clients from change in
// one commit.
//
//go:embed openapi/toolwire.v1.json
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document of the HTTP API (what
// GET /v1/openapi.json serves). The slice is a copy: callers may keep it.
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }
