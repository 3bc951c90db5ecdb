package toolset_test

import (
	"context"
	"testing"

	"github.com/toolwire/toolwire/internal/config"
	"github.com/toolwire/toolwire/internal/toolset"
)

func TestBuild(t *testing.T) {
	cfg, err := config.Parse([]byte(`{"deny": ["Write"], "permissions": {"deny": ["Bash(rm:*)"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := toolset.Build(context.Background(), cfg, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, name := range []string{"Bash", "Read", "Edit", "ToolSearch", "Noop", "Sleep"} {
		if _, ok := s.Registry.Lookup(name); !ok {
			t.Errorf("%s missing", name)
		}
	}
	if _, ok := s.Registry.Lookup("Write"); ok {
		t.Error("a whole-tool deny rule left Write in the pool")
	}
	if s.Policy == nil || len(s.Policy.Default.Deny) != 1 {
		t.Errorf("policy not carried: %+v", s.Policy)
	}

	plain, err := toolset.Build(context.Background(), nil, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, ok := plain.Registry.Lookup("Noop"); ok {
		t.Error("test tools without asking")
	}
	if plain.Policy != nil {
		t.Error("a policy without a config")
	}
}
