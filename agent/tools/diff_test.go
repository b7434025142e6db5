package tools

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnifiedDiff(t *testing.T) {
	t.Parallel()
	numbered := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "l%d\n", i)
		}
		return b.String()
	}
	tests := map[string]struct {
		before, after string
		want          string
		wantAdded     int
		wantRemoved   int
	}{
		"identical": {before: "a\n", after: "a\n", want: ""},
		"new file": {
			before: "", after: "a\nb\n", wantAdded: 2,
			want: "--- a/f\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n",
		},
		"insert at top": {
			before: "b\nc\n", after: "a\nb\nc\n", wantAdded: 1,
			want: "--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n+a\n b\n c\n",
		},
		"missing final newline": {
			before: "a\nb", after: "a\nb\n", wantAdded: 1, wantRemoved: 1,
			want: "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
		},
		"two hunks": {
			before: numbered(20), after: strings.Replace(strings.Replace(numbered(20), "l2\n", "X\n", 1), "l19\n", "Y\n", 1),
			wantAdded: 2, wantRemoved: 2,
			want: "--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n l1\n-l2\n+X\n l3\n l4\n l5\n" +
				"@@ -16,5 +16,5 @@\n l16\n l17\n l18\n-l19\n+Y\n l20\n",
		},
		"close changes merge": {
			before: numbered(12), after: strings.Replace(strings.Replace(numbered(12), "l3\n", "X\n", 1), "l9\n", "Y\n", 1),
			wantAdded: 2, wantRemoved: 2,
			want: "--- a/f\n+++ b/f\n@@ -1,12 +1,12 @@\n l1\n l2\n-l3\n+X\n l4\n l5\n l6\n l7\n l8\n-l9\n+Y\n l10\n l11\n l12\n",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, added, removed := unifiedDiff("f", tt.before, tt.after)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantAdded, added)
			assert.Equal(t, tt.wantRemoved, removed)
		})
	}
}

// TestMyersReconstructs checks on random inputs that the script turns a into b and
// is no longer than the simple remove-all/add-all script.
func TestMyersReconstructs(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "c", "d"}
	gen := func() []string {
		out := make([]string, r.IntN(30))
		for i := range out {
			out[i] = alphabet[r.IntN(len(alphabet))]
		}
		return out
	}
	for range 500 {
		a, b := gen(), gen()
		ops, ok := myers(a, b, maxDiffEdits)
		require.True(t, ok)
		var got []string
		edits := 0
		for _, op := range ops {
			switch op.kind {
			case ' ':
				require.Equal(t, a[op.a], b[op.b])
				got = append(got, a[op.a])
			case '+':
				got = append(got, b[op.b])
				edits++
			case '-':
				edits++
			}
		}
		assert.Equal(t, strings.Join(b, ","), strings.Join(got, ","))
		assert.LessOrEqual(t, edits, len(a)+len(b))
	}
}

func TestMyersGivesUp(t *testing.T) {
	t.Parallel()
	_, ok := myers([]string{"a", "b", "c"}, []string{"x", "y", "z"}, 2)
	assert.False(t, ok)
	a := strings.Repeat("old\n", 1500)
	b := strings.Repeat("new\n", 1500)
	got, added, removed := unifiedDiff("f", a, b)
	assert.Equal(t, 1500, added)
	assert.Equal(t, 1500, removed)
	assert.True(t, strings.HasPrefix(got, "--- a/f\n+++ b/f\n@@ -1,1500 +1,1500 @@\n-old\n"), got[:60])
}
