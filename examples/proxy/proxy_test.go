// The proxy examples, run as written: a recorded upstream stands in for the
// model API, `toolwire proxy`'s handler taps it, and the results are read
// from the HTTP API (when python3 is on PATH; the SDK scripts also need
// their SDK installed).
package proxy_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/httpapi"
	"github.com/toolwire/toolwire/internal/proxy"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin"
)

func TestProxyExamples(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH: the proxy examples need it to run")
	}
	srv := testenv.Server(t)
	reg := testenv.Registry(t, builtin.Tools()...)
	testenv.Pipeline(t, srv, pipeline.Config{Tools: reg, Executors: 2, WorkDir: t.TempDir()})
	var entries []tool.Entry
	for _, tl := range reg.Tools() {
		entries = append(entries, tool.Entry{Tool: tl})
	}
	apiURL := testenv.API(t, srv, httpapi.Config{Tools: func(f tool.Format) ([]byte, error) { return tool.Render(f, entries) }})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	for _, c := range []struct {
		format, stream, sdkBase, endpoint, sdk, module string
		ids                                            []string
	}{
		{"anthropic", "anthropic.sse", "", "/v1/messages", "anthropic_sdk.py", "anthropic", []string{"toolu_ex_01", "toolu_ex_02", "toolu_ex_03"}},
		{"openai-chat", "openai_chat.sse", "/v1", "/v1/chat/completions", "openai_sdk.py", "openai", []string{"call_ex_01", "call_ex_02", "call_ex_03"}},
	} {
		t.Run(c.format, func(t *testing.T) {
			upstream := recordedUpstream(t, ctx, python, c.stream)
			u, _ := url.Parse(upstream)
			p, err := proxy.New(proxy.Config{Upstream: u, Format: c.format, Client: testenv.Client(t, srv)})
			if err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			pctx, pcancel := context.WithCancel(ctx)
			t.Cleanup(pcancel)
			go func() { _ = p.Serve(pctx, ln) }()
			proxyURL := "http://" + ln.Addr().String()
			want := func(t *testing.T, out string) {
				t.Helper()
				for i, w := range []string{"first", "second", "third"} {
					line := fmt.Sprintf("result %d %s: %s", i, c.ids[i], w)
					if !strings.Contains(out, line) {
						t.Errorf("%q missing from:\n%s", line, out)
					}
				}
			}

			t.Run("stdlib", func(t *testing.T) {
				out, err := exec.CommandContext(ctx, python, "stdlib_client.py", "--proxy", proxyURL+c.endpoint, "--api", apiURL).CombinedOutput()
				if err != nil {
					t.Fatalf("stdlib_client.py: %v\n%s", err, out)
				}
				want(t, string(out))
			})
			t.Run("sdk", func(t *testing.T) {
				if exec.CommandContext(ctx, python, "-c", "import "+c.module).Run() != nil {
					t.Skipf("the %s package is not installed (pip install %s): %s is not run", c.module, c.module, c.sdk)
				}
				cmd := exec.CommandContext(ctx, python, c.sdk)
				cmd.Env = append(cmd.Environ(), "TOOLWIRE_PROXY="+proxyURL+c.sdkBase, "TOOLWIRE_API="+apiURL)
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s", c.sdk, err, out)
				}
				want(t, string(out))
			})
		})
	}
}

// recordedUpstream starts recorded_upstream.py on a free port.
func recordedUpstream(t *testing.T, ctx context.Context, python, stream string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.CommandContext(ctx, python, "recorded_upstream.py", "--port", fmt.Sprint(port), "--stream", stream)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.Contains(line, "recorded upstream on") {
		t.Fatalf("recorded_upstream.py did not start: %q %v", line, err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}
