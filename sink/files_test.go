package sink_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/sink"
)

// TestFilesMask checks the bytes Files writes: each kind of file masked by its name's
// rule, JSON kept valid, XML-escaped forms masked too.
func TestFilesMask(t *testing.T) {
	const secret = `s<&"3>`
	tests := []struct {
		name string
		file string
		give string
		want string
	}{
		{name: "text", file: "changes.patch", give: "+" + secret + "\n", want: "+***\n"},
		{name: "xml", file: "junit.xml", give: "<failure>s&lt;&amp;&#34;3&gt;</failure>", want: "<failure>***</failure>"},
		{name: "json", file: "result.json", give: `{"a":"x s<&\"3>","b":"s\u003c\u0026\"3\u003e"}`, want: `{"a":"x ***","b":"***"}`},
		{name: "jsonl", file: "messages.jsonl", give: "{\"a\":\"s<&\\\"3>\"}\n{\"b\":1}\n", want: "{\"a\":\"***\"}\n{\"b\":1}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := sink.NewFiles([]string{secret})
			path := filepath.Join(t.TempDir(), "sub", tt.file)
			require.NoError(t, files.WriteFile(path, []byte(tt.give), true))
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))

			w, err := files.OpenAppend(path)
			require.NoError(t, err)
			_, err = w.Write([]byte(tt.give))
			require.NoError(t, err)
			require.NoError(t, w.Close())
			got, err = os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.want+tt.want, string(got))
		})
	}
	for _, tt := range []struct {
		name  string
		write func(*sink.Files, string, any) error
	}{
		{"synced", (*sink.Files).WriteJSON},
		{"unsynced", (*sink.Files).WriteJSONUnsynced},
	} {
		t.Run("json stays valid, "+tt.name, func(t *testing.T) {
			files := sink.NewFiles([]string{"12345"})
			dir := t.TempDir()
			path := filepath.Join(dir, "stats.json")
			require.NoError(t, tt.write(files, path, map[string]any{"n": 12345, "s": "x12345"}))
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			var v map[string]any
			require.NoError(t, json.Unmarshal(b, &v), "%s", b)
			assert.Equal(t, map[string]any{"n": "***", "s": "x***"}, v)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Len(t, entries, 1, "the temporary file was renamed into place")
		})
	}
	t.Run("nil writes as is", func(t *testing.T) {
		var files *sink.Files
		path := filepath.Join(t.TempDir(), "a.txt")
		require.NoError(t, files.WriteFile(path, []byte(secret), false))
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, secret, string(b))
	})
}
