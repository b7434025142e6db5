package tools

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var markerRE = regexp.MustCompile(`\n\[\.\.\. truncated (\d+) bytes \.\.\.\]\n`)

// checkCut verifies a truncated text: valid UTF-8 when the input was, within max,
// and kept bytes plus the marker's count equal to the original length.
func checkCut(t *testing.T, original, got string, max int) {
	t.Helper()
	if utf8.ValidString(original) {
		assert.True(t, utf8.ValidString(got), "valid UTF-8: %q", got)
	}
	assert.LessOrEqual(t, len(got), max)
	m := markerRE.FindStringSubmatchIndex(got)
	require.NotNil(t, m, "marker in %q", got)
	n, err := strconv.Atoi(got[m[2]:m[3]])
	require.NoError(t, err)
	assert.Equal(t, len(original), len(got)-(m[1]-m[0])+n)
	assert.True(t, strings.HasPrefix(original, got[:m[0]]), "head is a prefix")
	assert.True(t, strings.HasSuffix(original, got[m[1]:]), "tail is a suffix")
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		give string
		max  int
	}{
		"ascii":          {give: strings.Repeat("abcdefghij", 100), max: 200},
		"two-byte":       {give: strings.Repeat("é", 500), max: 101},
		"three-byte":     {give: strings.Repeat("€", 500), max: 101},
		"four-byte":      {give: strings.Repeat("😀", 500), max: 101},
		"mixed":          {give: strings.Repeat("aé€😀", 300), max: 150},
		"mixed odd cap":  {give: strings.Repeat("é€😀\n", 300), max: 97},
		"head heavy":     {give: strings.Repeat("x", 5000) + "€", max: 100},
		"just over":      {give: strings.Repeat("y", 101), max: 100},
		"minimum cap":    {give: strings.Repeat("😀", 100), max: minTruncate},
		"invalid utf-8":  {give: strings.Repeat("\xff\xfe", 200), max: 100},
		"lines and tabs": {give: strings.Repeat("line\twith tab\n", 200), max: 300},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			checkCut(t, tt.give, Truncate(tt.give, tt.max), tt.max)
		})
	}
}

func TestTruncateFitsOrNoLimit(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "short", Truncate("short", 100))
	assert.Equal(t, strings.Repeat("a", 100), Truncate(strings.Repeat("a", 100), 100))
	assert.Equal(t, "unlimited", Truncate("unlimited", 0))
	assert.Equal(t, "neg", Truncate("neg", -1))
	// Below the minimum only a head is kept, still on a character boundary.
	assert.Equal(t, "éé", Truncate("ééééé", 5))
	assert.Equal(t, "", Truncate("😀😀", 3))
}

func TestCapture(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		writes []string
		limit  int
		budget int
		want   string
	}{
		"small":            {writes: []string{"ab", "cd"}, limit: 10, budget: 100, want: "abcd"},
		"fills head":       {writes: []string{"0123456789"}, limit: 10, budget: 100, want: "0123456789"},
		"head and tail":    {writes: []string{"0123456789", "abcdefghij"}, limit: 10, budget: 100, want: "0123456789abcdefghij"},
		"drops the middle": {writes: []string{"0123456789", "MIDDLE", "abcdefghij"}, limit: 10, budget: 100, want: "0123456789\n[... truncated 6 bytes ...]\nabcdefghij"},
		"ring wraps":       {writes: []string{"0123456789", "abc", "defg", "hijkl", "mnopqr"}, limit: 10, budget: 100, want: "0123456789\n[... truncated 8 bytes ...]\nijklmnopqr"},
		"one huge write":   {writes: []string{"0123456789" + strings.Repeat("-", 1000) + "abcdefghij"}, limit: 10, budget: 100, want: "0123456789\n[... truncated 1000 bytes ...]\nabcdefghij"},
		// The head limit splits € (3 bytes) and the tail starts inside 😀 (4 bytes):
		// both partial characters are dropped and counted.
		"split characters": {writes: []string{"aaaaaaaa€", strings.Repeat("z", 50), "😀bbbbbbbb"}, limit: 10, budget: 100, want: "aaaaaaaa\n[... truncated 57 bytes ...]\nbbbbbbbb"},
		"invalid replaced": {writes: []string{"a\xffb"}, limit: 10, budget: 100, want: "a\uFFFDb"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := newCapture(tt.limit)
			total := 0
			for _, w := range tt.writes {
				n, err := c.Write([]byte(w))
				require.NoError(t, err)
				assert.Equal(t, len(w), n)
				total += len(w)
			}
			assert.Equal(t, int64(total), c.total)
			assert.LessOrEqual(t, c.kept(), 2*tt.limit)
			assert.Equal(t, tt.want, c.render(tt.budget))
		})
	}
}

func TestCaptureRenderWithinBudget(t *testing.T) {
	t.Parallel()
	c := newCapture(1000)
	s := strings.Repeat("é€😀\n", 2000)
	for i := 0; i < len(s); i += 37 {
		_, _ = c.Write([]byte(s[i:min(i+37, len(s))]))
	}
	for _, budget := range []int{64, 100, 333, 999, 1500, 2000} {
		got := c.render(budget)
		checkCut(t, s, got, budget)
	}
}
