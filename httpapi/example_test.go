package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/httpapi"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin"
)

// A pipeline with the HTTP API in front, as `toolwire serve --api` runs it:
// an agent in any language posts its calls and reads the results, in call
// order, as server-sent events.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "toolwire-httpapi-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	srv, err := embedded.Start(embedded.Options{StoreDir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown()
	reg, err := tool.NewRegistry(builtin.Tools()...)
	if err != nil {
		log.Fatal(err)
	}
	p, err := pipeline.Start(ctx, srv.Connect, pipeline.Config{Space: subjects.Default(), Tools: reg, Executors: 2, WorkDir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Stop()
	nc, err := srv.Connect("api")
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	api, err := httpapi.New(httpapi.Config{Conn: nc, Space: subjects.Default()})
	if err != nil {
		log.Fatal(err)
	}
	ln, err := httpapi.Listen("127.0.0.1:0", api)
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close(context.Background())
	base := "http://" + ln.Addr()

	// What an agent sends when it does not stream: the calls and the end.
	calls := `{"calls":[{"id":"toolu_1","name":"Bash","input":{"command":"echo one"}},` +
		`{"id":"toolu_2","name":"Bash","input":{"command":"echo two"}}],"end":true}`
	resp, err := http.Post(base+"/v1/turns/turn_example/calls", "application/json", strings.NewReader(calls))
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println("POST calls:", resp.Status)

	resp, err = http.Get(base + "/v1/turns/turn_example/results")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "id: ") || strings.HasPrefix(line, "event: ") {
			fmt.Println(line)
		}
	}
	// Output:
	// POST calls: 202 Accepted
	// id: 0
	// event: result
	// id: 1
	// event: result
	// event: done
}
