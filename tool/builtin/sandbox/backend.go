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
	// to the allowed paths, TCP off (ABI 4+; not UDP), signals within the
	// command, no capabilities; the init is PID 1 of a PID namespace with
	// a /proc of its own where the host allows one (in a user namespace
	// when not root).
	BackendLandlock Backend = "landlock"
	// BackendBwrap runs the command under bubblewrap: the root file
	// system read-only, the allowed paths bound writable, PID, IPC, UTS
	// and (unless allowed) network namespaces of its own, no capabilities.
	BackendBwrap Backend = "bwrap"
	// BackendNone confines neither writes nor the network; the
	// environment, the limits and the cleanup still apply.
	BackendNone Backend = "none"
)

// Backends are the values a policy's Sandbox may take.
var Backends = []Backend{BackendAuto, BackendLandlock, BackendBwrap, BackendNone}

// Valid reports whether b is one of Backends or empty (auto).
func (b Backend) Valid() bool { return b == "" || slices.Contains(Backends, b) }

// Containment is how a policy's commands are contained on this host,
// worked out once (Policy.Containment) for the commands it runs.
type Containment struct {
	// Backend is the backend in force: landlock, bwrap or none.
	Backend Backend
	// Writes is whether writes are confined to the allowed paths.
	Writes bool
	// TCP is whether TCP connections and listening sockets are refused,
	// for a policy that does not allow the network (always false for one
	// that does).
	TCP bool
	// Network is whether the whole network is cut off (a network
	// namespace with only a loopback of its own, under bubblewrap), for a
	// policy that does not allow it. Landlock cuts TCP only: UDP, DNS
	// included, and the host's Unix sockets stay open.
	Network bool
	// Reaped is whether no process outlives its command, setsid ones
	// included (the process group is killed in any case).
	Reaped bool
	// Processes is whether the command sees only its own processes, in a
	// PID namespace with a /proc of its own: not the server, nor, through
	// /proc/<pid>/environ, the secrets of its starting environment.
	Processes bool
	// Capabilities is whether the command runs without any capability,
	// also when the server runs as root: it cannot make devices, open raw
	// sockets, mount, or pass over file permissions.
	Capabilities bool
	// Status says the above in a sentence, and why, for a start-up log.
	Status string

	policy     Policy  // what the commands are run under
	registered bool    // the program calls Main: commands run under an init
	bwrap      string  // the bubblewrap program, for BackendBwrap
	ns         *nsMode // how the init gets its namespaces, for BackendLandlock
}

// Confined reports whether c confines what strict mode requires: writes,
// no process left behind, none of the server's processes in sight, and no
// capabilities.
func (c Containment) Confined() bool { return c.Writes && c.Reaped && c.Processes && c.Capabilities }

// host is what this host offers a policy, as choose reads it.
type host struct {
	registered bool    // the program calls Main: an init is at hand
	abi        int     // the kernel's Landlock ABI, 0 without
	bwrap      string  // the bubblewrap program that works here, "" if none
	bwrapWhy   string  // why there is none
	ns         *nsMode // how an init gets a PID namespace here, nil if it cannot
	nsWhy      string  // why it cannot
}

// Containment is how p's commands are contained here. It asks the host
// anew each time (the kernel's Landlock ABI, and, where they may be used, a
// trial of the init's namespaces and of bubblewrap: a process or two), as
// what the host allows is the host's to change: a caller works it out once
// per policy and keeps it for the policy's commands.
func (p Policy) Containment() Containment {
	h := host{registered: registered.Load(), abi: landlockABI()}
	// The namespaces and bwrap are tried (once) only where they may be used.
	auto := p.Sandbox == "" || p.Sandbox == BackendAuto
	if (auto || p.Sandbox == BackendLandlock) && h.registered && h.abi > 0 {
		h.ns, h.nsWhy = pidNamespace()
	}
	if p.Sandbox == BackendBwrap || auto && !h.landlockSuffices(p) {
		h.bwrap, h.bwrapWhy = findBwrap(p.Bwrap)
	}
	c := choose(p, h)
	c.policy, c.registered = p, h.registered
	return c
}

// landlockSuffices reports whether Landlock confines all p asks here, and
// the init hides the server's processes.
func (h host) landlockSuffices(p Policy) bool {
	return h.registered && h.abi > 0 && (h.abi >= 4 || p.Network) && h.ns != nil
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
	case h.abi > 0 && h.ns == nil:
		noLandlock = "a Landlock command would see the server's processes: " + noNamespace(h)
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
	// The init drops the command's capabilities on any host (an empty
	// permitted set under no_new_privs).
	c := Containment{Backend: BackendLandlock, Writes: true, TCP: !p.Network && h.abi >= 4, Reaped: true,
		Processes: h.ns != nil, Capabilities: true, ns: h.ns}
	procs := "processes and /proc of their own, "
	if !c.Processes {
		procs = ""
	}
	switch {
	case p.Network:
		c.Status = fmt.Sprintf("contained with Landlock ABI %d: writes confined, the network allowed, %sno capabilities, no process outlives its command", h.abi, procs)
	case c.TCP:
		c.Status = fmt.Sprintf("contained with Landlock ABI %d: writes confined, TCP off unless allowed (UDP is not), %sno capabilities, no process outlives its command", h.abi, procs)
	default:
		c.Status = fmt.Sprintf("contained with Landlock ABI %d: writes confined, the network is not (ABI 4 restricts TCP), %sno capabilities, no process outlives its command", h.abi, procs)
	}
	if !c.Processes {
		c.Status = "partly " + c.Status + "; but the server's /proc is visible, and with it the secrets of its starting environment: " + noNamespace(h)
	}
	return c
}

// noNamespace says why h has no PID namespace for a command's init.
func noNamespace(h host) string {
	return "PID namespace unavailable (" + h.nsWhy + ")"
}

func withBwrap(p Policy, h host, why string) Containment {
	c := Containment{Backend: BackendBwrap, Writes: true, TCP: !p.Network, Network: !p.Network, Reaped: true, Processes: true,
		Capabilities: true, bwrap: h.bwrap} // --cap-drop ALL
	net := "no network"
	if p.Network {
		net = "the network allowed"
	}
	c.Status = fmt.Sprintf("contained with bubblewrap (%s) %s: writes confined, %s, processes and /proc of their own, no capabilities, no process outlives its command", h.bwrap, why, net)
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
