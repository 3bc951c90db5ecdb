package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/toolwire/toolwire/tool/builtin/sandbox"
)

// rawSocketEnv has a re-run of this test binary, started by a contained
// command, try to open a raw socket and say what happened.
const rawSocketEnv = "TOOLWIRE_TEST_RAW_SOCKET"

// tryRawSocket is the re-run's part: a raw ICMP socket takes CAP_NET_RAW
// (ping's datagram sockets do not, so ping would prove nothing).
func tryRawSocket() int {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_ICMP)
	if err != nil {
		fmt.Println("raw socket refused:", err)
		return 0
	}
	syscall.Close(fd)
	fmt.Println("raw socket opened")
	return 0
}

// capSets reads the capability sets of a /proc/<pid>/status text.
func capSets(status string) map[string]uint64 {
	sets := map[string]uint64{}
	for _, line := range strings.Split(status, "\n") {
		name, hex, ok := strings.Cut(line, ":\t")
		if !ok || !strings.HasPrefix(name, "Cap") {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
		if err == nil {
			sets[name] = v
		}
	}
	return sets
}

// TestBashNoCapabilities: a contained command has no capabilities, also
// when the server runs as root: it cannot make a device, open the kernel
// log for writing, or open a raw socket. Under Landlock, where the server
// may empty the bounding set (root with CAP_SETPCAP), the command's is
// empty too; bubblewrap leaves it full, which no_new_privs with an empty
// permitted set makes harmless. Nothing is written to the kernel log: the
// command only opens it (bubblewrap's /dev has none).
func TestBashNoCapabilities(t *testing.T) {
	own, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc here:", err)
	}
	const capSetPCAP = 8
	emptiesBounding := os.Geteuid() == 0 && capSets(string(own))["CapEff"]&(1<<capSetPCAP) != 0
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	eachBackend(t, func(t *testing.T, p sandbox.Policy) {
		dir := t.TempDir()
		res := bashUnder(t, p, dir, fmt.Sprintf(`grep ^Cap /proc/self/status
mknod dev c 1 3 2>/dev/null && echo mknod made a device
[ -c /dev/kmsg ] && { : > /dev/kmsg; } 2>/dev/null && echo kmsg opened for writing
: > /dev/null && echo null writable
%s=1 %q`, rawSocketEnv, self))
		t.Logf("as uid %d:\n%s", os.Geteuid(), res.Content)
		if res.IsError {
			t.Fatalf("the command failed: %s", res.Content)
		}
		sets := capSets(res.Content)
		for _, name := range []string{"CapEff", "CapPrm", "CapInh", "CapAmb", "CapBnd"} {
			v, ok := sets[name]
			if !ok {
				t.Errorf("%s missing from the command's status", name)
			} else if v != 0 && (name != "CapBnd" || emptiesBounding && p.Sandbox == sandbox.BackendLandlock) {
				t.Errorf("%s is %x, want 0", name, v)
			}
		}
		for _, bad := range []string{"mknod made", "kmsg opened", "raw socket opened"} {
			if strings.Contains(res.Content, bad) {
				t.Errorf("%s", bad)
			}
		}
		if !strings.Contains(res.Content, "null writable") || !strings.Contains(res.Content, "raw socket refused") {
			t.Errorf("the command did not run to its end:\n%s", res.Content)
		}
		if _, err := os.Lstat(filepath.Join(dir, "dev")); err == nil {
			t.Error("the device node exists")
		}
	})
}

// TestBashNoTerminal: a contained command leads a session of its own, so
// it has no controlling terminal and /dev/tty — one of the devices it may
// write — can never be the server's terminal.
func TestBashNoTerminal(t *testing.T) {
	eachBackend(t, func(t *testing.T, p sandbox.Policy) {
		// Field 6 of /proc/PID/stat is the session; the comm "(bash)" has
		// no space to shift the fields.
		res := bashUnder(t, p, t.TempDir(), `read -r _ _ _ _ _ sid _ < /proc/$$/stat; echo "pid=$$ sid=$sid"`)
		var pid, sid int
		// The program's init starts the command in a session of its own,
		// under bwrap too (whose --new-session alone would make bwrap's
		// init, PID 1 of the sandbox, the leader).
		_, err := fmt.Sscanf(res.Content, "pid=%d sid=%d", &pid, &sid)
		if err != nil || sid != pid {
			t.Fatalf("the command is not the leader of its own session: %+v", res)
		}
	})
}
