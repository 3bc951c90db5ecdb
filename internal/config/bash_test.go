package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/config"
	"github.com/toolwire/toolwire/tool/builtin/sandbox"
)

// TestBashSandbox: the backend and the bubblewrap program are read, and a
// wrong one is reported at its value.
func TestBashSandbox(t *testing.T) {
	c, err := config.Parse([]byte(`{"bash": {"sandbox": "bwrap", "bwrap": "/opt/bin/bwrap", "strict": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.BashPolicy(); p.Sandbox != sandbox.BackendBwrap || p.Bwrap != "/opt/bin/bwrap" || !p.Strict {
		t.Errorf("policy %+v", p)
	}
	for _, tc := range []struct{ body, at, want string }{
		{`{"bash": {"sandbox": "firejail"}}`, `"firejail"`, `field "bash".sandbox: "firejail" is not a backend: want "auto", "landlock", "bwrap" or "none"`},
		{`{"bash": {"sandbox": "none", "strict": true}}`, `true`, `field "bash".strict: true with sandbox "none" would refuse every command`},
		{`{"bash": {"bwrap": "bin/bwrap"}}`, `"bin/bwrap"`, `field "bash".bwrap: "bin/bwrap" is not an absolute path`},
	} {
		_, err := config.Parse([]byte(tc.body))
		var pe *config.PosError
		if !errors.As(err, &pe) || pe.Msg != tc.want {
			t.Errorf("%s: %v\nwant %s", tc.body, err, tc.want)
			continue
		}
		// Reported at the wrong value.
		if at := tc.body[pe.Offset:]; !strings.HasPrefix(at, tc.at) {
			t.Errorf("%s: reported at %q, want at %s", tc.body, at, tc.at)
		}
	}
}
