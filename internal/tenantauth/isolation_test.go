package tenantauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/internal/tenantauth"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/testtools"
)

// violations records the permission errors the server reports to a
// connection, which it sends instead of delivering a refused publish or
// subscription.
type violations struct {
	mu   sync.Mutex
	errs []string
}

func (v *violations) handler(_ *nats.Conn, _ *nats.Subscription, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.errs = append(v.errs, err.Error())
}

// has reports whether the server refused what on subject ("Publish" or
// "Subscription").
func (v *violations) has(what, subject string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	want := strings.ToLower(fmt.Sprintf("permissions violation for %s to %q", what, subject))
	for _, e := range v.errs {
		if strings.Contains(strings.ToLower(e), want) {
			return true
		}
	}
	return false
}

// tenantEnv is a server started with the written configuration, the
// pipeline signed in as the stages, and the two tenants' connections.
type tenantEnv struct {
	srv          *embedded.Server
	stages       *nats.Conn
	acme, globex *nats.Conn
	acmeErrs     *violations
	gate         chan struct{}
	started      chan struct{}
}

// writeAuth writes, into a new directory, the stages' user and acme's
// (NKey), as `toolwire auth init` and `auth tenant add acme` do.
func writeAuth(t *testing.T) (dir string, stages, acme tenantauth.Written) {
	t.Helper()
	dir = t.TempDir()
	stages, err := tenantauth.Init(dir, tenantauth.NKey, false)
	if err != nil {
		t.Fatal(err)
	}
	acme, err = tenantauth.AddTenant(dir, subjects.Default(), "acme", tenantauth.NKey, false)
	if err != nil {
		t.Fatal(err)
	}
	return dir, stages, acme
}

// nkey is the sign-in with the NKey seed in file seed.
func nkey(t *testing.T, seed string) nats.Option {
	t.Helper()
	opt, err := nats.NkeyOptionFromSeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	return opt
}

// connectNKey connects to srv as name, signed in with the seed in file
// seed; the connection closes with the test.
func connectNKey(t *testing.T, srv *embedded.Server, name, seed string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := srv.Connect(name, append(opts, nkey(t, seed))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func startTenants(t *testing.T, exec ...executor.Config) *tenantEnv {
	t.Helper()
	sp := subjects.Default()
	dir, stages, acme := writeAuth(t)
	globex, err := tenantauth.AddTenant(dir, sp, "globex", tenantauth.Password, false)
	if err != nil {
		t.Fatal(err)
	}
	e := &tenantEnv{acmeErrs: &violations{}, gate: make(chan struct{}), started: make(chan struct{}, 16)}
	e.srv = testenv.ServerWith(t, embedded.Options{ConfigFile: filepath.Join(dir, tenantauth.MainFile)})
	stagesKey := nkey(t, stages.Secret)
	dial := func(name string, opts ...nats.Option) (*nats.Conn, error) {
		return e.srv.Connect(name, append(opts, stagesKey)...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := pipeline.Config{Space: sp, Tools: testenv.Registry(t, append(testtools.Tools(), e.gateTool())...)}
	if len(exec) > 0 {
		cfg.Executor = exec[0]
	}
	p, err := pipeline.Start(ctx, dial, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	if e.stages, err = dial("stages"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.stages.Close)

	e.acme = connectNKey(t, e.srv, "acme", acme.Secret, nats.CustomInboxPrefix(sp.Inbox("acme")), nats.ErrorHandler(e.acmeErrs.handler))
	password, err := os.ReadFile(globex.Secret)
	if err != nil {
		t.Fatal(err)
	}
	// A bcrypt password costs the server a second or more to check under
	// the race detector on a loaded machine: more than nats.go's default
	// 2 s connect timeout once (CI, the race run). Past 2 s the server's
	// first PING, timed from the CONNECT, also goes out before the PONG
	// the client waits for, and the client gives up ("expected 'PONG',
	// got 'PING'", CI, the race run): the sign-in is then made again.
	for try := 1; ; try++ {
		e.globex, err = e.srv.Connect("globex", nats.UserInfo(globex.User, strings.TrimSpace(string(password))), nats.CustomInboxPrefix(sp.Inbox("globex")), nats.Timeout(30*time.Second))
		if err == nil {
			break
		}
		if try == 3 {
			t.Fatal(err)
		}
		t.Logf("sign-in %d of globex: %v", try, err)
	}
	t.Cleanup(e.globex.Close)
	return e
}

// gateTool is a tool whose calls wait for the test to close e.gate (or an
// interrupt): a turn the test can keep running.
func (e *tenantEnv) gateTool() *tool.Tool {
	return tool.MustBuild(tool.Definition{
		Name: "Gate", Description: "Test tool: waits for the gate.", Interrupt: tool.InterruptCancel,
		Call: func(ctx context.Context, _ json.RawMessage, _ tool.TurnContext, _ tool.Progress) (tool.Result, error) {
			e.started <- struct{}{}
			select {
			case <-e.gate:
				return tool.Result{Content: "the gate opened"}, nil
			case <-ctx.Done():
				return tool.Result{}, ctx.Err()
			}
		},
	})
}

func newClient(t *testing.T, nc *nats.Conn, tenant string) *client.Client {
	t.Helper()
	c, err := client.New(nc, client.Config{Space: subjects.Default(), Tenant: tenant})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func noops(n int) []client.Call {
	calls := make([]client.Call, n)
	for i := range calls {
		calls[i] = client.Call{ID: fmt.Sprintf("c%d", i), Name: "Noop", Input: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}
	}
	return calls
}

// readTurn reads a whole turn, failing the test unless its n results
// come in call order, then turn_done.
func readTurn(t *testing.T, ctx context.Context, cl *client.Client, turn string, n int) []*schemas.ToolResult {
	t.Helper()
	results, done, err := testenv.ReadTurn(ctx, cl, turn)
	if err != nil || done == nil || len(results) != n {
		t.Fatalf("turn %s: %d results, %v, %v; want %d results in order", turn, len(results), done, err, n)
	}
	return results
}

// TestTenantIsolation runs the pipeline on a server configured by
// `toolwire auth`: each tenant runs its turns through package client with
// its own credentials, and one tenant's credentials neither read nor
// steer anything of another's, by core NATS or the JetStream API.
func TestTenantIsolation(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the pipeline and waits for refused requests")
	}
	e := startTenants(t)
	sp := subjects.Default()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	acme, globex := newClient(t, e.acme, "acme"), newClient(t, e.globex, "globex")

	// Each tenant runs a turn, acme's read both live and, once done,
	// again from the stream: the second read's subscription sees nothing,
	// and every result comes through the stages' gap read.
	if err := acme.SubmitCalls(ctx, "a1", noops(5), client.TurnOptions{}); err != nil {
		t.Fatalf("acme submits its turn: %v", err)
	}
	readTurn(t, ctx, acme, "a1", 5)
	readTurn(t, ctx, acme, "a1", 5)
	stopApprovals, err := acme.Approvals("a1", func(*schemas.ApprovalRequest) {})
	if err != nil {
		t.Fatalf("acme follows its approvals: %v", err)
	}
	stopApprovals()
	if err := acme.SubmitCalls(ctx, "a0", noops(1), client.TurnOptions{}); err != nil {
		t.Fatalf("acme submits its turn: %v", err)
	}
	readTurn(t, ctx, acme, "a0", 1)

	// acme listens for globex's traffic every way it might.
	var leaked sync.Map
	spies := []string{">", "tw.>", "tw.globex.>", "tw.*.out.*", "tw.globex.out.*", "tw.globex.progress.*",
		"tw.globex.exec.>", "tw.*.result.*.*", "$KV.TW_LEASE.>", "tw_lease.>", "_INBOX.>", "_INBOX_tw.globex.>", "$JS.EVENT.>"}
	for _, s := range spies {
		if _, err := e.acme.Subscribe(s, func(m *nats.Msg) { leaked.Store(m.Subject, s) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.acme.Flush(); err != nil {
		t.Fatal(err)
	}

	// globex runs a turn whose first call waits; acme tries to cancel and
	// discard it, as globex's client would.
	calls := append([]client.Call{{ID: "g", Name: "Gate"}}, noops(3)...)
	if err := globex.SubmitCalls(ctx, "g1", calls, client.TurnOptions{}); err != nil {
		t.Fatalf("globex submits its turn: %v", err)
	}
	<-e.started
	// globex follows its turn, and acme has the JetStream API answer a
	// direct get of its own turn a0's turn_done (one result) on globex's
	// out subject: the server checks no permission on a reply subject.
	// globex's client must not take it for its own turn's end.
	subs := e.globex.NumSubscriptions()
	followed := make(chan string, 1)
	go func() {
		results, done, err := testenv.ReadTurn(ctx, globex, "g1")
		followed <- fmt.Sprintf("%d results, %+v, %v", len(results), done, err)
	}()
	for e.globex.NumSubscriptions() == subs {
		time.Sleep(time.Millisecond)
	}
	// On the subject both answers would land on: globex's own traffic
	// there (none until the gate opens) is told apart by its tenant.
	spy, err := e.stages.SubscribeSync("tw.globex.out.g1")
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(e.globex.Flush(), e.stages.Flush()); err != nil {
		t.Fatal(err)
	}
	if err := e.acme.PublishRequest("$JS.API.DIRECT.GET.TW_OUT.tw.acme.out.a0", "tw.globex.out.g1", nil); err != nil {
		t.Fatal(err)
	}
	if m, err := spy.NextMsg(5 * time.Second); err != nil || m.Header.Get("ce-tenant") != "acme" {
		t.Logf("the direct get's answer on globex's subject: %v %v", m, err)
	}
	// The reader, asked the same, answers nowhere but an inbox.
	if err := e.acme.PublishRequest("tw.acme.read.out.a0", "tw.globex.out.g1", nil); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(time.Second); time.Now().Before(end); {
		if m, err := spy.NextMsg(time.Until(end)); err == nil && m.Header.Get("ce-tenant") != "globex" {
			t.Errorf("the reader answered acme's read on %s: %v", m.Subject, m.Header)
		}
	}
	_ = spy.Unsubscribe()
	intruder := newClient(t, e.acme, "globex")
	short, cancelShort := context.WithTimeout(ctx, 3*time.Second)
	if err := intruder.Cancel(short, "g1", "acme"); err == nil {
		t.Error("acme cancelled globex's turn")
	}
	if err := intruder.Discard(short, "g1", "acme"); err == nil {
		t.Error("acme discarded globex's turn")
	}
	if err := intruder.SubmitCalls(short, "g1", noops(1), client.TurnOptions{}); err == nil {
		t.Error("acme submitted a call to globex's turn")
	}
	for d, err := range intruder.Results(short, "g1") {
		if err == nil {
			t.Errorf("acme read a delivery of globex's turn: %+v", d)
		}
		break
	}
	if _, err := intruder.Blob(short, "globex/g1/0"); err == nil {
		t.Error("acme read globex's blob store")
	}
	cancelShort()
	close(e.gate)
	if got := <-followed; !strings.HasPrefix(got, "4 results, &{Results:4}, <nil>") {
		t.Errorf("globex followed its turn while acme's messages were sent to it: %s, want 4 results", got)
	}
	for _, r := range readTurn(t, ctx, globex, "g1", 4) {
		if r.IsError {
			t.Errorf("globex's call %d: %q; acme's cancel or discard reached it", r.Seq, r.Content)
		}
	}

	// The JetStream API, asked directly: every request that could read,
	// list, change or delete another tenant's data or a stage's is refused.
	for _, subj := range []string{
		"tw.globex.in.g2.use", "tw.globex.approval.g1.0.decision",
		"$JS.API.INFO", "$JS.API.STREAM.LIST", "$JS.API.STREAM.NAMES", "$JS.API.STREAM.INFO.TW_OUT",
		"$JS.API.STREAM.MSG.GET.TW_OUT", "$JS.API.DIRECT.GET.TW_OUT", "$JS.API.DIRECT.GET.TW_OUT.tw.globex.out.g1",
		"$JS.API.DIRECT.GET.KV_TW_LEASE.$KV.TW_LEASE.globex.g1", "$JS.API.DIRECT.GET.KV_TW_LEASE",
		"$JS.API.STREAM.INFO.KV_TW_LEASE", "$JS.API.STREAM.INFO.OBJ_TW_BLOBS", "$JS.API.DIRECT.GET.TW_APPROVAL",
		"$JS.API.STREAM.PURGE.TW_OUT", "$JS.API.STREAM.DELETE.TW_OUT", "$JS.API.STREAM.PURGE.TW_IN",
		"$JS.API.CONSUMER.CREATE.TW_OUT.spy.tw.globex.out.g1", "$JS.API.CONSUMER.CREATE.TW_OUT.spy",
		"$JS.API.CONSUMER.CREATE.TW_OUT.spy.tw.*.out.*", "$JS.API.CONSUMER.CREATE.TW_IN.spy.tw.globex.in.*.*",
		"$JS.API.CONSUMER.DURABLE.CREATE.TW_OUT.spy", "$JS.API.CONSUMER.LIST.TW_OUT", "$JS.API.CONSUMER.NAMES.TW_OUT",
		"$JS.API.CONSUMER.MSG.NEXT.TW_IN.router", "$JS.API.CONSUMER.MSG.NEXT.TW_EXEC.exec-default",
		"$JS.API.CONSUMER.MSG.NEXT.TW_RESULT.reorder", "$JS.API.CONSUMER.DELETE.TW_IN.router",
		"$JS.API.CONSUMER.INFO.TW_RESULT.reorder",
		// No consumer API at all, not even on acme's own subjects.
		"$JS.API.CONSUMER.CREATE.TW_OUT.spy.tw.acme.out.a1", "$JS.API.CONSUMER.CREATE.TW_APPROVAL.spy.tw.acme.approval.a1.0.request",
		"$JS.API.CONSUMER.MSG.NEXT.TW_OUT.spy", "$JS.API.CONSUMER.DELETE.TW_OUT.spy", "$JS.API.CONSUMER.INFO.TW_OUT.spy",
		// Reads of globex's turns, asked of the stages.
		"tw.globex.read.out.g1", "tw.globex.read.approval.g1",
	} {
		refused(t, e, subj, `{}`)
	}

	// The server checks neither a push consumer's deliver subject against
	// its creator's permissions nor how many durable consumers one
	// leaves: both are refused with the consumer API as a whole. (A push
	// consumer on acme's filter delivering to globex's progress subject
	// had globex's subscription receive acme's results.)
	refused(t, e, "$JS.API.CONSUMER.CREATE.TW_OUT.push.tw.acme.out.a1",
		`{"stream_name":"TW_OUT","config":{"name":"push","filter_subject":"tw.acme.out.a1","deliver_subject":"tw.globex.progress.g9","ack_policy":"none"}}`)
	refused(t, e, "$JS.API.CONSUMER.CREATE.TW_OUT.keep.tw.acme.out.a1",
		`{"stream_name":"TW_OUT","config":{"durable_name":"keep","name":"keep","filter_subject":"tw.acme.out.a1","ack_policy":"none"}}`)
	refused(t, e, "$JS.API.CONSUMER.DURABLE.CREATE.TW_OUT.keep",
		`{"stream_name":"TW_OUT","config":{"durable_name":"keep","filter_subject":"tw.acme.out.a1","ack_policy":"none"}}`)

	// The reader reads the tenant of the request subject: acme asking for
	// a turn named like globex's gets acme's (none), and a reply
	// subject in globex's inbox gets no answer at all.
	inbox := e.acme.NewInbox()
	answers, err := e.acme.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.acme.PublishRequest("tw.acme.read.out.g1", inbox, nil); err != nil {
		t.Fatal(err)
	}
	m, err := answers.NextMsg(5 * time.Second)
	if err != nil || m.Header.Get(schemas.HeaderReadEnd) != schemas.ReadDone {
		t.Errorf("acme reads its own turn g1: %v %v, want only the end marker", err, m)
	}
	_ = answers.Unsubscribe()
	stolen, err := e.globex.SubscribeSync(sp.Inbox("globex") + ".>")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.globex.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := e.acme.PublishRequest("tw.acme.read.out.a1", sp.Inbox("globex")+".x", nil); err != nil {
		t.Fatal(err)
	}
	if m, err := stolen.NextMsg(time.Second); err == nil {
		t.Errorf("acme's read was answered into globex's inbox: %v", m.Header)
	}

	if err := e.acme.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, s := range spies {
		if !e.acmeErrs.has("Subscription", s) {
			t.Errorf("acme's subscription to %s was not refused", s)
		}
	}
	leaked.Range(func(k, v any) bool {
		t.Errorf("acme's subscription %s received %s", v, k)
		return true
	})

	// The client's reads left no consumer behind.
	for _, stream := range []string{sp.OutStream(), sp.ApprovalStream()} {
		m, err := e.stages.Request("$JS.API.CONSUMER.NAMES."+stream, nil, 5*time.Second)
		if err != nil || !strings.Contains(string(m.Data), `"consumers":[]`) && !strings.Contains(string(m.Data), `"consumers":null`) {
			t.Errorf("consumers of %s after the reads: %v %s", stream, err, msgData(m))
		}
	}
}

// refused checks that acme's request to subj with body is refused by the
// server with a permission violation and answered by no one.
func refused(t *testing.T, e *tenantEnv, subj, body string) {
	t.Helper()
	inbox := e.acme.NewInbox()
	answers, err := e.acme.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer answers.Unsubscribe()
	if err := e.acme.PublishRequest(subj, inbox, []byte(body)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !e.acmeErrs.has("Publish", subj) {
		if time.Now().After(deadline) {
			t.Errorf("acme's publish to %s was not refused", subj)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	if m, err := answers.NextMsg(50 * time.Millisecond); err == nil {
		t.Errorf("acme's request to %s was answered: %s", subj, m.Data)
	}
}

func msgData(m *nats.Msg) string {
	if m == nil {
		return ""
	}
	return string(m.Data)
}
