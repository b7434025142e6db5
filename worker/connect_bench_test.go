package worker_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentrun/agentrun/sandbox/netproxy"
	"github.com/agentrun/agentrun/worker"
	"github.com/agentrun/agentrun/worker/workertest"
)

// connectLoop is bash connecting to the proxy's port and closing 200 times, timing
// itself, and printing the mean in microseconds.
const connectLoop = `p=${HTTP_PROXY##*:}; p=${p%/}; s=$EPOCHREALTIME
for i in $(seq 200); do exec 3<>/dev/tcp/127.0.0.1/$p || exit 1; exec 3>&-; done
e=$EPOCHREALTIME; echo $(( (${e/./} - ${s/./}) / 200 ))`

// BenchmarkProxyConnect is a tool's connection to the network proxy, as bash's
// /dev/tcp makes it, and its close: at level landlock agentrun makes each connect
// itself (sandbox.ServeConnects), at strict the kernel does, in the sandbox's network
// namespace, and at off directly to the proxy on the host's loopback. bash times 200 of them in one Bash call, so the call's own cost is out.
func BenchmarkProxyConnect(b *testing.B) {
	for _, level := range benchLevels {
		b.Run(string(level), func(b *testing.B) {
			cfg := benchConfig(b, level)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			defer func() { cancel(); wg.Wait() }()
			serve, err := worker.ServeProxy(ctx, &wg, netproxy.New(netproxy.Allowlist{}, nil, nil), &cfg)
			if err != nil {
				b.Fatal(err)
			}
			c := worker.New(cfg, workertest.Bin(b), nil)
			if serve != nil {
				c.SetProxy(serve)
			}
			defer func() {
				if err := c.Close(); err != nil {
					b.Error(err)
				}
			}()
			in, _ := json.Marshal(map[string]string{"command": connectLoop})
			var sum float64
			n := 0
			for b.Loop() {
				r := c.RunTool(ctx, "Bash", in)
				fields := strings.Fields(r.Content)
				if r.IsError || len(fields) == 0 {
					b.Fatalf("Bash: %s", r.Content)
				}
				us, err := strconv.Atoi(fields[len(fields)-1])
				if err != nil {
					b.Fatalf("Bash: %s", r.Content)
				}
				sum += float64(us)
				n++
			}
			b.ReportMetric(sum/float64(n), "µs/connect")
		})
	}
}
