package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/tool"
)

// openAPI serves the API's contract.
func (a *API) openAPI(w http.ResponseWriter, _ *request) error {
	w.Header().Set("Content-Type", "application/json")
	_, err := w.Write(schemas.OpenAPI())
	return err
}

// tools serves the tools list as `toolwire tools` prints it.
func (a *API) tools(w http.ResponseWriter, r *request) error {
	if a.cfg.Tools == nil {
		return problemf(kindNotFound, "this server has no tools list (it runs no router)")
	}
	name := r.URL.Query().Get("format")
	if name == "" {
		name = string(tool.FormatAnthropic)
	}
	f, err := tool.ParseFormat(name)
	if err != nil {
		return problemf(kindBadRequest, "format: %v", err)
	}
	out, err := a.cfg.Tools(f)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(out)
	return err
}

// blob serves a stored oversize output of the request's tenant.
func (a *API) blob(w http.ResponseWriter, r *request) error {
	ref := r.PathValue("ref")
	// A blob's name starts with its tenant: another tenant's ref is not
	// found, whatever it names.
	if !strings.HasPrefix(ref, r.tenant+"/") || len(ref) > 400 {
		return problemf(kindNotFound, "no blob %q of tenant %s", ref, r.tenant)
	}
	b, err := r.c.Blob(r.Context(), ref)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, err = w.Write(b)
	return err
}
