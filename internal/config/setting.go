package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// VarPrefix begins the name of every setting's environment variable.
const VarPrefix = "TOOLWIRE_"

// Kinds of setting: what a value holds and how a variable writes it.
const (
	KindString   = "string"
	KindInteger  = "integer"
	KindBoolean  = "boolean"
	KindDuration = "duration"
	// KindJSON is a list or an object; its variable holds it as JSON.
	KindJSON = "json"
)

// A Setting is one key of the configuration, as the struct Config
// declares it.
type Setting struct {
	// Key names it in the file: "tool_search", "serve.drain_timeout".
	Key string
	// Var is the environment variable that sets it: VarPrefix and the key
	// in capitals, each dot an underscore.
	Var string
	// Default is its value when nothing sets it, written as its flag takes
	// it ("" for a structured setting).
	Default string
	// Kind is one of the Kind constants.
	Kind string
	// Secret values are redacted wherever the configuration is shown.
	Secret bool
	// URLs values are URLs (comma-separated) whose credentials are
	// redacted wherever the configuration is shown: a userinfo password
	// (a lone userinfo, a NATS token, whole) and every query value.
	URLs bool

	check string
	index []int
}

// settings are Config's settings in the order of its fields.
var settings = collect()

// fields are the keys of the file's top level, in the order errors list them.
var fields = topKeys()

// Settings lists every setting, in the order of Config's fields.
func Settings() []Setting { return append([]Setting(nil), settings...) }

// Lookup is the setting of key.
func Lookup(key string) (Setting, bool) {
	for _, s := range settings {
		if s.Key == key {
			return s, true
		}
	}
	return Setting{}, false
}

func collect() []Setting {
	var out []Setting
	ct := reflect.TypeFor[Config]()
	for i := range ct.NumField() {
		f := ct.Field(i)
		key := jsonKey(f)
		if key == "" {
			continue
		}
		if f.Tag.Get("config") != "section" {
			out = append(out, newSetting(key, f, []int{i}))
			continue
		}
		for j := range f.Type.NumField() {
			sf := f.Type.Field(j)
			out = append(out, newSetting(key+"."+jsonKey(sf), sf, []int{i, j}))
		}
	}
	return out
}

func newSetting(key string, f reflect.StructField, index []int) Setting {
	return Setting{
		Key: key, Var: VarPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_")),
		Default: f.Tag.Get("default"), Kind: kindOf(f.Type), Secret: f.Tag.Get("secret") == "true",
		URLs:  f.Tag.Get("secret") == "urls",
		check: f.Tag.Get("check"), index: index,
	}
}

func jsonKey(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	return name
}

func kindOf(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return KindDuration
	case t.Kind() == reflect.String:
		return KindString
	case t.Kind() == reflect.Int:
		return KindInteger
	case t.Kind() == reflect.Bool:
		return KindBoolean
	}
	return KindJSON
}

func topKeys() []string {
	var keys []string
	for _, s := range settings {
		if k, _, _ := strings.Cut(s.Key, "."); len(keys) == 0 || keys[len(keys)-1] != k {
			keys = append(keys, k)
		}
	}
	return keys
}

// section is the index of Config's section field of key, -1 when key
// names no section.
func section(key string) int {
	ct := reflect.TypeFor[Config]()
	for i := range ct.NumField() {
		if f := ct.Field(i); jsonKey(f) == key && f.Tag.Get("config") == "section" {
			return i
		}
	}
	return -1
}

// ParseText reads a scalar setting's value as a variable or a flag writes
// it ("20s", "4", "true"), checks it, and returns it in its canonical
// form; the error says why it is refused.
func (s Setting) ParseText(text string) (string, error) {
	v, err := s.fromText(text)
	if err != nil {
		return "", err
	}
	if err := s.validate(v); err != nil {
		return "", err
	}
	return format(v), nil
}

func (s Setting) fromText(text string) (any, error) {
	switch s.Kind {
	case KindString:
		return text, nil
	case KindInteger:
		n, err := strconv.Atoi(text)
		if err != nil {
			return nil, fmt.Errorf("want an integer, found %q", text)
		}
		return n, nil
	case KindBoolean:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return nil, fmt.Errorf("want true or false, found %q", text)
		}
		return b, nil
	case KindDuration:
		d, err := time.ParseDuration(text)
		if err != nil {
			return nil, fmt.Errorf("want a duration like \"20s\" or \"1m30s\", found %q", text)
		}
		return d, nil
	}
	return nil, fmt.Errorf("%s is a structured setting: want JSON", s.Key)
}

// fromJSON reads a scalar setting's value as the file writes it.
func (s Setting) fromJSON(raw json.RawMessage) (any, error) {
	found := describeRaw(raw)
	switch s.Kind {
	case KindString:
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return nil, fmt.Errorf("want a string, found %s", found)
		}
		return v, nil
	case KindInteger:
		var v int
		if json.Unmarshal(raw, &v) != nil {
			if found == "a number" {
				found = string(raw)
			}
			return nil, fmt.Errorf("want an integer, found %s", found)
		}
		return v, nil
	case KindBoolean:
		var v bool
		if json.Unmarshal(raw, &v) != nil {
			return nil, fmt.Errorf("want true or false, found %s", found)
		}
		return v, nil
	case KindDuration:
		var text string
		if json.Unmarshal(raw, &text) != nil {
			return nil, fmt.Errorf("want a duration like \"20s\" or \"1m30s\", found %s", found)
		}
		return s.fromText(text)
	}
	return nil, fmt.Errorf("not a scalar setting")
}

// validate runs the setting's check on v.
func (s Setting) validate(v any) error {
	if s.check == "" {
		return nil
	}
	check, ok := checks[s.check]
	if !ok {
		panic("config: setting " + s.Key + " names an unknown check " + s.check)
	}
	return check(v)
}

// format writes v as a flag takes it.
func format(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	case bool:
		return strconv.FormatBool(v)
	case time.Duration:
		return v.String()
	}
	return fmt.Sprint(v)
}

// setScalar reads the scalar setting s from raw at offset at into c.
func (c *Config) setScalar(s Setting, raw json.RawMessage, at int64) error {
	if string(raw) == "null" {
		return nil
	}
	v, err := s.fromJSON(raw)
	if err == nil {
		err = s.validate(v)
	}
	if err != nil {
		return errAt(at, "field %s: %v", quoteKey(s.Key), err)
	}
	reflect.ValueOf(c).Elem().FieldByIndex(s.index).Set(reflect.ValueOf(v))
	if c.fromFile == nil {
		c.fromFile = map[string]string{}
	}
	c.fromFile[s.Key] = format(v)
	return nil
}

// setSection reads the section key (an object of scalar settings) from raw
// at offset at, each member checked at its own place.
func (c *Config) setSection(key string, raw json.RawMessage, at int64) error {
	if string(raw) == "null" {
		return nil
	}
	var members []Setting
	var known []string
	for _, s := range settings {
		if strings.HasPrefix(s.Key, key+".") {
			members = append(members, s)
			known = append(known, strings.TrimPrefix(s.Key, key+"."))
		}
	}
	if describeRaw(raw) != "an object" {
		return errAt(at, "field %q: want an object of settings like {%q: …}, found %s", key, known[0], describeRaw(raw))
	}
	seen := map[string]bool{}
	return eachMember(raw, at, func(name string, keyAt, valueAt int64, value json.RawMessage) error {
		if seen[name] {
			return errAt(keyAt, "field %s appears twice", quoteKey(key+"."+name))
		}
		seen[name] = true
		for _, s := range members {
			if s.Key == key+"."+name {
				return c.setScalar(s, value, valueAt)
			}
		}
		return errAt(keyAt, "unknown field %s (known in %q: %s)", quoteKey(key+"."+name), key, strings.Join(known, ", "))
	})
}

// quoteKey writes a key as errors name it: "serve".drain_timeout.
func quoteKey(key string) string {
	top, rest, ok := strings.Cut(key, ".")
	if !ok {
		return strconv.Quote(key)
	}
	return strconv.Quote(top) + "." + rest
}

// FileValue is the value the file gives the scalar setting key, as a flag
// takes it; false when the file (or c, nil) does not set it.
func (c *Config) FileValue(key string) (string, bool) {
	if c == nil {
		return "", false
	}
	v, ok := c.fromFile[key]
	return v, ok
}
