package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolwire/toolwire/subjects"
)

// checks are the value checks a setting's `check` tag names. Each refuses
// a value with the reason, for an error that names the setting's key (in
// a file) or its variable (in the environment).
var checks = map[string]func(v any) error{
	"positive": func(v any) error {
		if d, ok := v.(time.Duration); ok {
			if d <= 0 {
				return fmt.Errorf("want a positive duration, found %s", d)
			}
			return nil
		}
		if n := v.(int); n <= 0 {
			return fmt.Errorf("want a positive integer, found %d", n)
		}
		return nil
	},
	"nonnegative": func(v any) error {
		if n := v.(int); n < 0 {
			return fmt.Errorf("want 0 or more, found %d", n)
		}
		return nil
	},
	"replicas": func(v any) error {
		if n := v.(int); n < 0 || n > 5 {
			return fmt.Errorf("JetStream keeps 1 to 5 replicas (0: the default), found %d", n)
		}
		return nil
	},
	"addr": func(v any) error {
		s := v.(string)
		if s == "" {
			return nil
		}
		_, port, err := net.SplitHostPort(s)
		if err != nil {
			return fmt.Errorf("want host:port like \"127.0.0.1:8090\" (or empty), found %q", s)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return fmt.Errorf("port %q of %q is not a number from 0 to 65535", port, s)
		}
		return nil
	},
	"stages": func(v any) error {
		s := strings.TrimSpace(v.(string))
		if s == "none" {
			return nil
		}
		known := []string{"router", "executor", "reorder"}
		for _, st := range strings.Split(s, ",") {
			if !slices.Contains(known, strings.TrimSpace(st)) {
				return fmt.Errorf("unknown stage %q (known: %s; or none)", strings.TrimSpace(st), strings.Join(known, ", "))
			}
		}
		return nil
	},
	"loglevel": func(v any) error {
		var l slog.Level
		if l.UnmarshalText([]byte(v.(string))) != nil {
			return fmt.Errorf("want debug, info, warn or error, found %q", v)
		}
		return nil
	},
	"logformat": func(v any) error {
		if s := strings.ToLower(v.(string)); s != "text" && s != "json" {
			return fmt.Errorf("want text or json, found %q", v)
		}
		return nil
	},
	"httpurl": func(v any) error {
		s := v.(string)
		if s == "" {
			return nil
		}
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("want an http:// or https:// URL with a host, found %q", s)
		}
		return nil
	},
	"tenant": func(v any) error { return subjects.CheckToken("tenant", v.(string)) },
}

// eachMember calls fn with each member of the JSON object raw (at offset
// at of the file): its name, where the name and the value begin, and the
// value.
func eachMember(raw json.RawMessage, at int64, fn func(name string, keyAt, valueAt int64, value json.RawMessage) error) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errAt(at, "want an object, found %s", describeRaw(raw))
	}
	for dec.More() {
		keyAt := at + skipSpace(raw, dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return syntaxError(err, keyAt)
		}
		name, _ := tok.(string)
		valueAt := at + skipSpace(raw, dec.InputOffset())
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return syntaxError(err, valueAt)
		}
		if err := fn(name, keyAt, valueAt, value); err != nil {
			return err
		}
	}
	return nil
}
