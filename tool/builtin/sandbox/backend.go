package sandbox

import (
	"fmt"
	"slices"
)

// Backend is what confines a command's writes and network.
type Backend string

const (
	// BackendAuto (the default, also as "") is Landlock where the kernel
	// offers enough of it for the policy, else bubblewrap where it is
	// installed and works, else Landlock as far as it goes, else nothing:
	// a warning in Status, and a refusal in strict mode.
	BackendAuto Backend = "auto"
	// BackendLandlock confines the command's init with Landlock: writes
	// to the allowed paths, TCP off (ABI 4+), signals within the command.
	BackendLandlock Backend = "landlock"
	// BackendBwrap runs the command under bubblewrap: the root file
	// system read-only, the allowed paths bound writable, PID, IPC, UTS
	// and (unless allowed) network namespaces of its own.
	BackendBwrap Backend = "bwrap"
	// BackendNone confines neither writes nor the network; the
	// environment, the limits and the cleanup still apply.
	BackendNone Backend = "none"
)

// Backends are the values a policy's Sandbox may take.
var Backends = []Backend{BackendAuto, BackendLandlock, BackendBwrap, BackendNone}

// Valid reports whether b is one of Backends or empty (auto).
func (b Backend) Valid() bool { return b == "" || slices.Contains(Backends, b) }

// Containment is how a policy's commands are contained on this host.
type Containment struct {
	// Backend is the backend in force: landlock, bwrap or none.
	Backend Backend
	// Writes is whether writes are confined to the allowed paths.
	Writes bool
	// Network is whether the network is cut off for a policy that does
	// not allow it (always false for one that does).
	Network bool
	// Reaped is whether no process outlives its command, setsid ones
	// included (the process group is killed in any case).
	Reaped bool
	// Status says the above in a sentence, and why, for a start-up log.
	Status string

	bwrap string // the bubblewrap program, for BackendBwrap
}

// Confined reports whether c confines what strict mode requires: writes,
// and no process left behind.
func (c Containment) Confined() bool { return c.Writes && c.Reaped }

// host is what this host offers a policy, as choose reads it.
type host struct {
	registered bool   // the program calls Main: an init is at hand
	abi        int    // the kernel's Landlock ABI, 0 without
	bwrap      string // the bubblewrap program that works here, "" if none
	bwrapWhy   string // why there is none
}

// Containment is how p's commands are contained here.
func (p Policy) Containment() Containment {
	h := host{registered: registered.Load(), abi: landlockABI()}
	// bwrap is looked for (and tried, once) only where it may be used.
	auto := p.Sandbox == "" || p.Sandbox == BackendAuto
	if p.Sandbox == BackendBwrap || auto && !h.landlockSuffices(p) {
		h.bwrap, h.bwrapWhy = findBwrap(p.Bwrap)
	}
	return choose(p, h)
}

// landlockSuffices reports whether Landlock confines all p asks here.
func (h host) landlockSuffices(p Policy) bool {
	return h.registered && h.abi > 0 && (h.abi >= 4 || p.Network)
}

// choose picks the backend for p on h and says why.
func choose(p Policy, h host) Containment {
	landlock := h.registered && h.abi > 0
	noLandlock := "the kernel has no Landlock"
	switch {
	case !h.registered:
		noLandlock = "the program does not call sandbox.Main"
	case h.abi > 0 && h.abi < 4 && !p.Network:
		noLandlock = fmt.Sprintf("Landlock ABI %d cannot turn TCP off (ABI 4 can)", h.abi)
	}
	switch p.Sandbox {
	case BackendNone:
		return none(h, "bash.sandbox is none")
	case BackendLandlock:
		if !landlock {
			return none(h, "bash.sandbox is landlock, but "+noLandlock)
		}
		return withLandlock(p, h)
	case BackendBwrap:
		if h.bwrap == "" {
			return none(h, "bash.sandbox is bwrap, but "+h.bwrapWhy)
		}
		return withBwrap(p, h, "as configured")
	}
	switch {
	case h.landlockSuffices(p):
		return withLandlock(p, h)
	case h.bwrap != "":
		return withBwrap(p, h, "as "+noLandlock)
	case landlock:
		c := withLandlock(p, h)
		c.Status += "; " + h.bwrapWhy
		return c
	}
	return none(h, noLandlock+", and "+h.bwrapWhy)
}

func withLandlock(p Policy, h host) Containment {
	c := Containment{Backend: BackendLandlock, Writes: true, Network: !p.Network && h.abi >= 4, Reaped: true}
	switch {
	case p.Network:
		c.Status = fmt.Sprintf("contained with Landlock ABI %d: writes confined, the network allowed, no process outlives its command", h.abi)
	case c.Network:
		c.Status = fmt.Sprintf("contained with Landlock ABI %d: writes confined, TCP off unless allowed, no process outlives its command", h.abi)
	default:
		c.Status = fmt.Sprintf("contained with Landlock ABI %d: writes confined, the network is not (ABI 4 restricts TCP)", h.abi)
	}
	return c
}

func withBwrap(p Policy, h host, why string) Containment {
	c := Containment{Backend: BackendBwrap, Writes: true, Network: !p.Network, Reaped: true, bwrap: h.bwrap}
	net := "no network"
	if p.Network {
		net = "the network allowed"
	}
	c.Status = fmt.Sprintf("contained with bubblewrap (%s) %s: writes confined, %s, processes and /proc of their own, no process outlives its command", h.bwrap, why, net)
	return c
}

// none is the containment without a backend: the environment and limits,
// and the init's cleanup where the program has one.
func none(h host, why string) Containment {
	if !h.registered {
		return Containment{Backend: BackendNone, Status: "partly contained: " + why + ", so commands get a scrubbed environment, limits and their process group, but no init, and writes and the network are not confined"}
	}
	return Containment{Backend: BackendNone, Reaped: true, Status: "partly contained: " + why + ", so writes and the network are not confined; no process outlives its command"}
}
