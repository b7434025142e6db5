package sse_test

import (
	"fmt"
	"strings"

	"github.com/agentrun/agentrun/transport/sse"
)

func ExampleDecoder() {
	body := strings.NewReader(": keep-alive\r\n" +
		"event: content_block_delta\r\n" +
		"data: {\"text\":\"Hello\"}\r\n\r\n" +
		"data: line one\ndata: line two\n\n")
	d := sse.NewDecoder(body)
	for d.Next() {
		e := d.Event()
		if e.Comment {
			fmt.Printf("comment %q\n", e.Data)
			continue
		}
		fmt.Printf("event %q data %q\n", e.Type, e.Data)
	}
	if err := d.Err(); err != nil {
		fmt.Println("error:", err)
	}
	// Output:
	// comment "keep-alive"
	// event "content_block_delta" data "{\"text\":\"Hello\"}"
	// event "" data "line one\nline two"
}
