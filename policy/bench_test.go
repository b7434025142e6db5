package policy

import "testing"

// BenchmarkClassify measures the policy check of a typical command.
func BenchmarkClassify(b *testing.B) {
	d, p := newDirs(b), mustParse(b, DefaultMode)
	cmd := `cd sub && go test ./... 2>&1 | tee /tmp/test.log; grep -rn "TODO" --include='*.go' . | head -20`
	b.ReportAllocs()
	for b.Loop() {
		_ = p.CheckCommand(cmd, d)
	}
}
