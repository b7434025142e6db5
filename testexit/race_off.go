//go:build !race

package testexit

import "os"

func exit(code int) { os.Exit(code) }
