package sandbox

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// The securebits (capabilities(7)) that keep a thread without
// capabilities across exec and uid changes, each locked so that nothing it
// starts may unset it: root gets no capabilities at exec (NOROOT), none
// come back or go with a change of uid (NO_SETUID_FIXUP, KEEP_CAPS unset
// and locked), and none may be raised as ambient.
const (
	secbitNoRoot                  = 1 << 0
	secbitNoRootLocked            = 1 << 1
	secbitNoSetuidFixup           = 1 << 2
	secbitNoSetuidFixupLocked     = 1 << 3
	secbitKeepCapsLocked          = 1 << 5
	secbitNoCapAmbientRaise       = 1 << 6
	secbitNoCapAmbientRaiseLocked = 1 << 7

	noCapsSecurebits = secbitNoRoot | secbitNoRootLocked | secbitNoSetuidFixup | secbitNoSetuidFixupLocked |
		secbitKeepCapsLocked | secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLocked
)

// dropCapabilities leaves the calling thread, and so the command it
// starts, with no capabilities, root or not: an init started by root holds
// them all (it mounts /proc with one), and a command that kept them could
// make devices, open raw sockets, load modules, or unmount its /proc to
// see the server's.
//
// What makes it certain is an empty permitted set with no_new_privs:
// exec then grants no more than the thread had (file capabilities and
// setuid bits included), and a thread may always empty its own sets. Where
// the thread may (CAP_SETPCAP) it also empties the bounding set and locks
// the securebits, so that nothing in the command could get one back.
// Capabilities belong to a thread: the init's other threads keep theirs.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("reading capabilities: %w", err)
	}
	if data[0].Effective&(1<<unix.CAP_SETPCAP) != 0 {
		bits, err := unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0)
		if err != nil {
			return fmt.Errorf("reading securebits: %w", err)
		}
		if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits|noCapsSecurebits), 0, 0, 0); err != nil {
			return fmt.Errorf("setting securebits: %w", err)
		}
		for c := 0; ; c++ {
			err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
			if errors.Is(err, unix.EINVAL) {
				break // past the last capability this kernel has
			}
			if err != nil {
				return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
			}
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clearing capabilities: %w", err)
	}
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("reading capabilities: %w", err)
	}
	for _, d := range data {
		if d.Effective|d.Permitted|d.Inheritable != 0 {
			return fmt.Errorf("capabilities left after dropping them all: %+v", data)
		}
	}
	return nil
}
