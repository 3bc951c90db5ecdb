package sandbox

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestChoose: the backend in force for each policy on each kind of host,
// and what its status says.
func TestChoose(t *testing.T) {
	const bw = "/usr/bin/bwrap"
	ns := &nsMode{}
	missing := host{registered: true, abi: 0, bwrapWhy: "bubblewrap (bwrap) is not installed"}
	full := host{registered: true, abi: 7, bwrap: bw, ns: ns}
	old := host{registered: true, abi: 3, bwrap: bw, ns: ns}
	oldOnly := host{registered: true, abi: 3, bwrapWhy: "bubblewrap (bwrap) is not installed", ns: ns}
	bwOnly := host{registered: true, abi: 0, bwrap: bw}
	unregistered := host{abi: 7, bwrapWhy: "bubblewrap (bwrap) is not installed"}
	const noNS = "clone: operation not permitted"
	noPIDs := host{registered: true, abi: 7, bwrap: bw, nsWhy: noNS}
	noPIDsOnly := host{registered: true, abi: 7, bwrapWhy: "bubblewrap (bwrap) does not work here", nsWhy: noNS}
	for _, tc := range []struct {
		name    string
		p       Policy
		h       host
		backend Backend
		tcp     bool // TCP cut off
		status  string
	}{
		{"auto prefers Landlock", Policy{}, full, BackendLandlock, true, "contained with Landlock ABI 7: writes confined, TCP off"},
		{"auto without Landlock", Policy{Sandbox: BackendAuto}, bwOnly, BackendBwrap, true, "contained with bubblewrap (/usr/bin/bwrap) as the kernel has no Landlock: writes confined, no network"},
		{"auto with an ABI that cannot cut TCP", Policy{}, old, BackendBwrap, true, "as Landlock ABI 3 cannot turn TCP off (ABI 4 can)"},
		{"an old ABI is enough with the network allowed", Policy{Network: true}, old, BackendLandlock, false, "Landlock ABI 3: writes confined, the network allowed"},
		{"an old ABI and no bwrap", Policy{}, oldOnly, BackendLandlock, false, "the network is not (ABI 4 restricts TCP), processes and /proc of their own, no capabilities, no process outlives its command; bubblewrap (bwrap) is not installed"},
		{"neither", Policy{}, missing, BackendNone, false, "partly contained: the kernel has no Landlock, and bubblewrap (bwrap) is not installed, so writes and the network are not confined"},
		{"no init", Policy{}, unregistered, BackendNone, false, "partly contained: the program does not call sandbox.Main, and bubblewrap (bwrap) is not installed, so commands get a scrubbed environment"},
		{"bwrap forced", Policy{Sandbox: BackendBwrap}, full, BackendBwrap, true, "bubblewrap (/usr/bin/bwrap) as configured"},
		{"bwrap forced, network allowed", Policy{Sandbox: BackendBwrap, Network: true}, full, BackendBwrap, false, "the network allowed"},
		{"bwrap forced and missing", Policy{Sandbox: BackendBwrap}, host{registered: true, abi: 7, bwrapWhy: "bubblewrap is not at /x (bash.bwrap)"}, BackendNone, false, "partly contained: bash.sandbox is bwrap, but bubblewrap is not at /x (bash.bwrap)"},
		{"landlock forced", Policy{Sandbox: BackendLandlock}, old, BackendLandlock, false, "Landlock ABI 3"},
		{"landlock forced and missing", Policy{Sandbox: BackendLandlock}, bwOnly, BackendNone, false, "partly contained: bash.sandbox is landlock, but the kernel has no Landlock"},
		{"none", Policy{Sandbox: BackendNone}, full, BackendNone, false, "partly contained: bash.sandbox is none, so writes and the network are not confined; no process outlives"},
		{"auto without a PID namespace", Policy{}, noPIDs, BackendBwrap, true, "as a Landlock command would see the server's processes: PID namespace unavailable (" + noNS + ")"},
		{"Landlock without a PID namespace, and no bwrap", Policy{}, noPIDsOnly, BackendLandlock, true,
			"partly contained with Landlock ABI 7: writes confined, TCP off unless allowed (UDP is not), no capabilities, no process outlives its command; but the server's /proc is visible, and with it the secrets of its starting environment: PID namespace unavailable (" + noNS + "); bubblewrap (bwrap) does not work here"},
		{"landlock forced without a PID namespace", Policy{Sandbox: BackendLandlock}, noPIDs, BackendLandlock, true, "but the server's /proc is visible"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := choose(tc.p, tc.h)
			if c.Backend != tc.backend || c.TCP != tc.tcp || !strings.Contains(c.Status, tc.status) {
				t.Errorf("got %s (TCP cut %v): %q\nwant %s (TCP cut %v): %q", c.Backend, c.TCP, c.Status, tc.backend, tc.tcp, tc.status)
			}
			if c.Network != (c.Backend == BackendBwrap && !tc.p.Network) {
				t.Errorf("whole network cut %v under %s", c.Network, c.Backend)
			}
			if c.Capabilities != (c.Backend != BackendNone) {
				t.Errorf("capabilities dropped %v under %s", c.Capabilities, c.Backend)
			}
			if wantConfined := tc.backend != BackendNone && tc.h.ns != nil || tc.backend == BackendBwrap; c.Confined() != wantConfined {
				t.Errorf("confined %v, want %v", c.Confined(), wantConfined)
			}
			if c.Backend == BackendBwrap && c.bwrap != bw {
				t.Errorf("bwrap program %q", c.bwrap)
			}
		})
	}
	if c := choose(Policy{}, full); !c.Processes || c.ns != ns || !strings.Contains(c.Status, "processes and /proc of their own") {
		t.Errorf("Landlock with a PID namespace: %+v", c)
	}
	if !choose(Policy{}, bwOnly).Reaped || choose(Policy{}, unregistered).Reaped {
		t.Error("bubblewrap reaps without an init; no backend without one does not")
	}
}

// TestBackendValid: the backends a configuration may name.
func TestBackendValid(t *testing.T) {
	for _, b := range []Backend{"", "auto", "landlock", "bwrap", "none"} {
		if !b.Valid() {
			t.Errorf("%q is refused", b)
		}
	}
	for _, b := range []Backend{"Landlock", "firejail", " bwrap"} {
		if b.Valid() {
			t.Errorf("%q is accepted", b)
		}
	}
}

// TestBwrapArgs: what bubblewrap is told for a command.
func TestBwrapArgs(t *testing.T) {
	dir := t.TempDir()
	tmp, _ := filepath.EvalSymlinks("/tmp")
	real, _ := filepath.EvalSymlinks(dir)
	got := strings.Join(bwrapArgs(writableMounts([]string{dir, "", "/nonexistent/path"}), dir, false), " ")
	want := "--ro-bind / / --dev /dev --proc /proc --bind " + tmp + " " + tmp + " --bind " + real + " " + real +
		" --unshare-pid --unshare-ipc --unshare-uts --unshare-net --cap-drop ALL --die-with-parent --new-session --chdir " + dir
	if got != want {
		t.Errorf("args\n%s\nwant\n%s", got, want)
	}
	if got := strings.Join(bwrapArgs(bwrapMounts{}, "", true), " "); strings.Contains(got, "--unshare-net") || strings.Contains(got, "--chdir") {
		t.Errorf("the network allowed, no directory: %s", got)
	}
}
