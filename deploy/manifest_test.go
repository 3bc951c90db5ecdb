// Package deploy_test checks the deployment files against each other and
// against the code they run: every manifest parses, the names, labels and
// ports one object gives another exist, and the streams, consumers, flags
// and configuration files they name are the ones toolwire has.
package deploy_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// object is one Kubernetes object of a manifest, as parsed YAML.
type object struct {
	file string
	doc  int
	m    map[string]any
}

func (o object) String() string {
	return fmt.Sprintf("%s %s (%s, document %d)", o.kind(), o.name(), o.file, o.doc+1)
}

func (o object) kind() string { return str(o.m["kind"]) }
func (o object) name() string { return str(dig(o.m, "metadata", "name")) }

// readYAML parses every document of file, refusing duplicate keys and
// anything that is not a mapping.
func readYAML(t *testing.T, file string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []map[string]any
	for i := 0; ; i++ {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: document %d: %v", file, i+1, err)
		}
		if m != nil {
			docs = append(docs, m)
		}
	}
}

// manifests reads the objects of every resource the kustomization lists.
func manifests(t *testing.T) []object {
	t.Helper()
	k := kustomization(t)
	var objs []object
	for _, r := range strs(t, k["resources"], "kustomization resources") {
		for i, m := range readYAML(t, filepath.Join("kubernetes", r)) {
			o := object{file: r, doc: i, m: m}
			if o.kind() == "" || o.name() == "" || str(m["apiVersion"]) == "" {
				t.Fatalf("%s: document %d has no apiVersion, kind or metadata.name", r, i+1)
			}
			objs = append(objs, o)
		}
	}
	return objs
}

func kustomization(t *testing.T) map[string]any {
	t.Helper()
	docs := readYAML(t, "kubernetes/kustomization.yaml")
	if len(docs) != 1 {
		t.Fatalf("kustomization.yaml: %d documents, want 1", len(docs))
	}
	return docs[0]
}

// byKind returns the objects of kind.
func byKind(objs []object, kind string) []object {
	var out []object
	for _, o := range objs {
		if o.kind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// dig walks nested mappings; nil where a key is missing.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func strs(t *testing.T, v any, what string) []string {
	t.Helper()
	var out []string
	for _, e := range list(v) {
		s, ok := e.(string)
		if !ok {
			t.Fatalf("%s: %v is not a string", what, e)
		}
		out = append(out, s)
	}
	return out
}

func strMap(v any) map[string]string {
	out := map[string]string{}
	m, _ := v.(map[string]any)
	for k, e := range m {
		out[k] = fmt.Sprint(e)
	}
	return out
}

// selects reports whether a selector's labels all appear in labels.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// flag returns the value of --name in args (--name=v or --name v).
func flag(args []string, name string) (string, bool) {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}
