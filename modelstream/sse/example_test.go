package sse_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/toolwire/toolwire/modelstream/sse"
)

// Reading a stream event by event, with the leniencies of real model
// streams: "data:" without a space, CRLF line ends, a comment line, and a
// last event that no blank line ends. End is the byte just past each event,
// so a caller can say where in the stream something happened.
func Example() {
	const stream = "event: ping\ndata: {}\n\n" +
		": keep-alive\r\n" +
		"data:{\"a\":1}\r\ndata: {\"b\":2}\r\n\r\n" +
		"data: [DONE]"
	r := sse.NewReader(strings.NewReader(stream))
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("type=%q data=%q end=%d\n", ev.Type, ev.Data, ev.End)
	}
	fmt.Println("read", r.Offset(), "of", len(stream), "bytes")
	// Output:
	// type="ping" data="{}" end=22
	// type="" data="{\"a\":1}\n{\"b\":2}" end=67
	// type="" data="[DONE]" end=79
	// read 79 of 79 bytes
}

// Split cuts a recorded stream into one chunk per event, so that a replay
// can pause between events the way the model paced them.
func ExampleSplit() {
	for _, chunk := range sse.Split([]byte("data: 1\n\ndata: 2\n\ndata: 3")) {
		fmt.Printf("%q\n", chunk)
	}
	// Output:
	// "data: 1\n\n"
	// "data: 2\n\n"
	// "data: 3"
}
