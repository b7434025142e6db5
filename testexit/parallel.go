package testexit

import (
	"flag"
	"strconv"
)

// Parallel makes n the number of a test binary's parallel tests that run at once,
// unless its command line sets -test.parallel (go test -parallel). TestMain calls it
// before m.Run. The testing package's default, GOMAXPROCS, suits tests that compute;
// a package whose tests mostly wait (on subprocesses, timers, grace periods) leaves
// the cores idle under it.
func Parallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
