package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSkipped(t *testing.T) {
	for _, c := range []struct {
		name, out, reason string
		ok                bool
	}{
		{name: "ran", out: "BenchmarkX\nBenchmarkX \t 1\t 5.0 ns/op\nPASS\n"},
		{name: "skipped with a reason", ok: true, reason: "chromium is not installed",
			out: "BenchmarkReport1000\n--- SKIP: BenchmarkReport1000\n    report_test.go:42: chromium is not installed\nPASS\n"},
		{name: "a reason with a table bar", ok: true, reason: "needs a / b",
			out: "--- SKIP: BenchmarkX\n    x_test.go:1: needs a | b\n"},
		{name: "a reason with no place", ok: true, reason: "plain words: here",
			out: "--- SKIP: BenchmarkX\n    plain words: here\n"},
		{name: "no reason", ok: true, reason: "no reason given", out: "--- SKIP: BenchmarkX\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			reason, ok := skipped(c.out)
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.reason, reason)
		})
	}
}
