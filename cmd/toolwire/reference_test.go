package main

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/config"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the settings reference in docs/configuration.md")

const (
	refBegin = "<!-- settings: generated from internal/config by TestReference (go test ./cmd/toolwire -run TestReference -update-docs) -->\n"
	refEnd   = "<!-- end of settings -->\n"
)

// TestReference: docs/configuration.md lists every setting with its
// variable, default, flags and meaning, as the doc comments of
// internal/config say; -update-docs rewrites it.
func TestReference(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "configuration.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	i, j := strings.Index(text, refBegin), strings.Index(text, refEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q", path, refBegin, refEnd)
	}
	want := text[:i] + refBegin + reference(t) + text[j:]
	if *updateDocs {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want != text {
		t.Errorf("%s is not the settings of internal/config: run go test ./cmd/toolwire -run TestReference -update-docs", path)
	}
}

// reference is the table of every setting.
func reference(t *testing.T) string {
	docs := fieldDocs(t)
	flags := map[string][]string{}
	for _, cmd := range slices.Sorted(maps.Keys(bindings)) {
		for flag, key := range bindings[cmd] {
			flags[key] = append(flags[key], "`"+cmd+" --"+flag+"`")
		}
	}
	var b strings.Builder
	section := ""
	for _, s := range config.Settings() {
		top, _, nested := strings.Cut(s.Key, ".")
		if !nested {
			top = ""
		}
		if top != section || b.Len() == 0 {
			section = top
			name := "Top level"
			if top != "" {
				name = "`" + top + "`"
			}
			b.WriteString("\n### " + name + "\n\n")
			if top != "" {
				b.WriteString(docs[top] + "\n\n")
			}
			b.WriteString("| key | variable | default | flags | meaning |\n|---|---|---|---|---|\n")
		}
		def := "`" + s.Default + "`"
		switch {
		case s.Kind == config.KindJSON:
			def = "—"
		case s.Default == "":
			def = "empty"
		}
		f := slices.Sorted(slices.Values(flags[s.Key]))
		if len(f) == 0 {
			f = []string{"—"}
		}
		meaning := docs[s.Key]
		if meaning == "" {
			t.Errorf("setting %s has no doc comment", s.Key)
		}
		if s.Kind != config.KindString || s.Secret || s.URLs {
			meaning += " (" + s.Kind
			switch {
			case s.Secret:
				meaning += ", secret: redacted when shown"
			case s.URLs:
				meaning += ", a URL's password, token and query values redacted when shown"
			}
			meaning += ")"
		}
		b.WriteString("| `" + s.Key + "` | `" + s.Var + "` | " + def + " | " + strings.Join(f, ", ") + " | " + meaning + " |\n")
	}
	b.WriteString("\n")
	return b.String()
}

// fieldDocs reads the doc comments of Config and its sections from the
// source of internal/config, by key (a section's own under its key).
func fieldDocs(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	dir := filepath.Join("..", "..", "internal", "config")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]*ast.StructType{}
	typeDocs := map[string]string{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, sp := range g.Specs {
				ts, ok := sp.(*ast.TypeSpec)
				if !ok {
					continue
				}
				if st, isStruct := ts.Type.(*ast.StructType); isStruct {
					types[ts.Name.Name] = st
					typeDocs[ts.Name.Name] = g.Doc.Text()
				}
			}
		}
	}
	docs := map[string]string{}
	var walk func(typeName, prefix string)
	walk = func(typeName, prefix string) {
		for _, fl := range types[typeName].Fields.List {
			if fl.Tag == nil || len(fl.Names) != 1 {
				continue
			}
			tag, _ := strconv.Unquote(fl.Tag.Value)
			key, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
			if key == "" || key == "-" {
				continue
			}
			if reflect.StructTag(tag).Get("config") == "section" {
				name := fl.Type.(*ast.Ident).Name
				docs[key] = sentence(typeDocs[name], name)
				walk(name, key+".")
				continue
			}
			docs[prefix+key] = sentence(fl.Doc.Text(), fl.Names[0].Name)
		}
	}
	walk("Config", "")
	return docs
}

// sentence is a doc comment on one line without its leading Go name:
// "Listen is the address." becomes "The address.".
func sentence(doc, name string) string {
	s := strings.Join(strings.Fields(doc), " ")
	s = regexp.MustCompile(`^`+regexp.QuoteMeta(name)+` (is |are )?`).ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "|", `\|`)
	if s == "" {
		return ""
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
