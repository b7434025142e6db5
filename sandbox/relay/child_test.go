package relay

import (
	"fmt"
	"net"
	"os"
)

// childEnv selects, in a re-executed test binary, what runChild does.
const childEnv = "RELAY_TEST_CHILD"

// runChild runs in a fresh network namespace: with mode "up" it brings lo up first,
// then either way it listens on 127.0.0.1 and connects to itself, printing "ok" or
// the step that failed.
func runChild(mode string) int {
	if mode == "up" {
		if err := LoopbackUp(); err != nil {
			fmt.Println("up:", err)
			return 0
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		return 0
	}
	defer func() { _ = l.Close() }()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		fmt.Println("dial:", err)
		return 0
	}
	defer func() { _ = c.Close() }()
	s, err := l.Accept()
	if err != nil {
		fmt.Println("accept:", err)
		return 0
	}
	defer func() { _ = s.Close() }()
	if _, err := c.Write([]byte("x")); err != nil {
		fmt.Println("write:", err)
		return 0
	}
	b := make([]byte, 1)
	if _, err := s.Read(b); err != nil {
		fmt.Println("read:", err)
		return 0
	}
	_, _ = fmt.Fprintln(os.Stdout, "ok")
	return 0
}
