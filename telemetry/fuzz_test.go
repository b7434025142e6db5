package telemetry_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/telemetry"
)

// FuzzParseList checks that ParseList never panics, that what it returns has keys
// without separators, and that FormatList writes what ParseList reads back.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{"", "a=1", "a=1,b=2", " k = v ", "x=%20%2C", "a=b=c", ",,", "=", "a", "a=%zz", "é=ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		kvs, err := telemetry.ParseList(s)
		for _, kv := range kvs {
			require.NotEmpty(t, kv.Key)
			require.False(t, strings.ContainsAny(kv.Key, ",= %"), "key %q", kv.Key)
		}
		if err != nil {
			return
		}
		again, err := telemetry.ParseList(telemetry.FormatList(kvs))
		require.NoError(t, err)
		assert.Equal(t, kvs, again)
	})
}
