package yamljson_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.yaml.in/yaml/v3"

	"github.com/agentrun/agentrun/fuzzguard"
	"github.com/agentrun/agentrun/testexit"
	"github.com/agentrun/agentrun/yamljson"
)

// TestMain checks that no test leaves a goroutine behind (fuzzguard's watchdog).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit)) }

// parse returns the value of a one-document YAML text.
func parse(t testing.TB, text string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte(text), &doc))
	require.Len(t, doc.Content, 1)
	return doc.Content[0]
}

func TestAppend(t *testing.T) {
	tests := map[string]struct {
		give string
		want string
	}{
		"mapping keeps its order":    {give: "{z: 1, a: 2, m: 3}", want: `{"z":1,"a":2,"m":3}`},
		"empty mapping and list":     {give: "{a: {}, b: []}", want: `{"a":{},"b":[]}`},
		"sequence":                   {give: "[1, two, [3], {four: 4}]", want: `[1,"two",[3],{"four":4}]`},
		"null forms":                 {give: "[null, ~, '']", want: `[null,null,""]`},
		"empty value is null":        {give: "a:", want: `{"a":null}`},
		"booleans":                   {give: "[true, false, True]", want: `[true,false,true]`},
		"integers":                   {give: "[0, -7, 42]", want: `[0,-7,42]`},
		"integer forms decoded":      {give: "[0x1F, 0o17, +5, 007]", want: `[31,15,5,7]`},
		"uint64 past int64":          {give: "0xFFFFFFFFFFFFFFFF", want: `18446744073709551615`},
		"big integer exact":          {give: "123456789012345678901234567890", want: `123456789012345678901234567890`},
		"precise float exact":        {give: "[3.14159265358979323846264338327950288, 1.0, 1e308, -0.0]", want: `[3.14159265358979323846264338327950288,1.0,1e308,-0.0]`},
		"tagged 1e400 kept exact":    {give: "!!float 1e400", want: `1e400`},
		"float forms decoded":        {give: "[.5, +1.5, 1.e3, -.25]", want: `[0.5,1.5,1000,-0.25]`},
		"tagged number quoted":       {give: "!!int '12'", want: `12`},
		"strings":                    {give: `[plain, "quoted", 'single', "a\tb"]`, want: `["plain","quoted","single","a\tb"]`},
		"html stays unescaped":       {give: `"<a> & <b>"`, want: `"<a> & <b>"`},
		"unicode and controls":       {give: `"é \u0001 \u2028"`, want: `"é \u0001 \u2028"`},
		"number-like strings":        {give: `["1", "true", "null"]`, want: `["1","true","null"]`},
		"timestamps as written":      {give: "[2001-12-14t21:59:43.10-05:00, 2002-12-14]", want: `["2001-12-14t21:59:43.10-05:00","2002-12-14"]`},
		"binary as its text":         {give: "!!binary aGVsbG8=", want: `"aGVsbG8="`},
		"scalar keys as strings":     {give: "{1: a, true: b, null: c}", want: `{"1":"a","true":"b","null":"c"}`},
		"alias expanded":             {give: "{a: &x {b: [1]}, c: *x, d: *x}", want: `{"a":{"b":[1]},"c":{"b":[1]},"d":{"b":[1]}}`},
		"alias as a key":             {give: "{a: &k key, *k : v}", want: `{"a":"key","key":"v"}`},
		"merge key written as a key": {give: "{a: &x {b: 1}, c: {<<: *x}}", want: `{"a":{"b":1},"c":{"<<":{"b":1}}}`},
		"block style":                {give: "a:\n  - b: c\n    d: |\n      line\n", want: `{"a":[{"b":"c","d":"line\n"}]}`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := yamljson.Append([]byte("x="), parse(t, tt.give), "v", yamljson.Options{})
			require.NoError(t, err)
			assert.Equal(t, "x="+tt.want, string(got))
			assert.True(t, json.Valid(got[2:]), "%s is not JSON", got[2:])
		})
	}
}

func TestAppendErrors(t *testing.T) {
	budget := func(n int) *int { return &n }
	tests := map[string]struct {
		give     string
		opts     yamljson.Options
		wantPath string
		wantMsg  string
		wantLine int
		wantCol  int
	}{
		"infinity":              {give: "{a: [1, .inf]}", wantPath: "v.a[1]", wantLine: 1, wantCol: 9, wantMsg: ".inf is not a finite number, which JSON cannot hold"},
		"minus infinity":        {give: "-.Inf", wantPath: "v", wantLine: 1, wantCol: 1, wantMsg: "-.Inf is not a finite number, which JSON cannot hold"},
		"nan":                   {give: "a:\n  b: .nan\n", wantPath: "v.a.b", wantLine: 2, wantCol: 6, wantMsg: ".nan is not a finite number, which JSON cannot hold"},
		"tagged not a number":   {give: "!!float abc", wantPath: "v", wantLine: 1, wantCol: 1, wantMsg: `"abc" is not a number`},
		"tagged not an integer": {give: "!!int abc", wantPath: "v", wantLine: 1, wantCol: 1, wantMsg: `"abc" is not an integer`},
		"hex past 64 bits":      {give: "[!!int 0x1FFFFFFFFFFFFFFFFF]", wantPath: "v[0]", wantLine: 1, wantCol: 2, wantMsg: "integer 0x1FFFFFFFFFFFFFFFFF out of range: past 64 bits, write it in decimal"},
		"tagged not a boolean":  {give: "{a: !!bool maybe}", wantPath: "v.a", wantLine: 1, wantCol: 5, wantMsg: `"maybe" is not a boolean`},
		"local tag":             {give: "{a: !thing x}", wantPath: "v.a", wantLine: 1, wantCol: 5, wantMsg: "want a JSON value, got a value tagged !thing"},
		"list as a key":         {give: "{a: 1, [b]: 2}", wantPath: "v", wantLine: 1, wantCol: 8, wantMsg: "a JSON object key must be a scalar, got a list"},
		"duplicate key":         {give: "{a: 1, b: 2,\n a: 3}", wantPath: "v.a", wantLine: 2, wantCol: 2, wantMsg: `duplicate key "a" (first at 1:2)`},
		"cyclic alias":          {give: "&x {a: [*x]}", wantPath: "v.a[0]", wantLine: 1, wantCol: 9, wantMsg: "alias *x refers to a value that contains it"},
		"too deep": {give: "[[[[1]]]]", opts: yamljson.Options{MaxDepth: 3}, wantPath: "v[0][0][0]", wantLine: 1, wantCol: 4,
			wantMsg: "nested more than 3 levels deep"},
		"too large": {give: "[aaaa, bbbb, cccc]", opts: yamljson.Options{MaxBytes: 12}, wantPath: "v[1]", wantLine: 1, wantCol: 8,
			wantMsg: "too large: more than 12 bytes as JSON by this value"},
		"budget spent": {give: "{a: &x [1, 2], b: *x}", opts: yamljson.Options{Budget: budget(5)}, wantPath: "v.b[0]", wantLine: 1, wantCol: 9,
			wantMsg: "too large: too many values after expanding aliases"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := yamljson.Append(nil, parse(t, tt.give), "v", tt.opts)
			assert.Nil(t, got)
			e, ok := errors.AsType[*yamljson.Error](err)
			require.True(t, ok, "error %v is not an *Error", err)
			assert.Equal(t, tt.wantPath, e.Path)
			assert.Equal(t, tt.wantMsg, e.Msg)
			assert.Equal(t, tt.wantPath+": "+tt.wantMsg, e.Error())
			if assert.NotNil(t, e.Node) {
				assert.Equal(t, tt.wantLine, e.Node.Line, "line")
				assert.Equal(t, tt.wantCol, e.Node.Column, "column")
			}
		})
	}
}

// TestAppendLimitsPass checks that values right at the limits convert.
func TestAppendLimitsPass(t *testing.T) {
	n := parse(t, "[[[1]]]")
	got, err := yamljson.Append(nil, n, "", yamljson.Options{MaxDepth: 4, MaxBytes: len("[[[1]]]")})
	require.NoError(t, err)
	assert.Equal(t, "[[[1]]]", string(got))
	left := 4
	_, err = yamljson.Append(nil, n, "", yamljson.Options{Budget: &left})
	require.NoError(t, err)
	assert.Zero(t, left, "four values visited")
}

// TestAppendHooks checks each hook: Enter resolves and releases, Pairs lists the
// entries, String rewrites strings, and a hook's error is placed at its node.
func TestAppendHooks(t *testing.T) {
	errHook := errors.New("hook refused")
	t.Run("enter resolves aliases and releases", func(t *testing.T) {
		var entered []string
		open := 0
		o := yamljson.Options{Enter: func(n *yaml.Node, path string) (*yaml.Node, func(), error) {
			entered = append(entered, path)
			open++
			if n.Kind == yaml.AliasNode {
				n = n.Alias
			}
			return n, func() { open-- }, nil
		}}
		got, err := yamljson.Append(nil, parse(t, "{a: &x [1], b: *x}"), "", o)
		require.NoError(t, err)
		assert.JSONEq(t, `{"a":[1],"b":[1]}`, string(got))
		assert.Equal(t, []string{"", "a", "a[0]", "b", "b[0]"}, entered)
		assert.Zero(t, open, "every release called")
	})
	t.Run("pairs", func(t *testing.T) {
		o := yamljson.Options{Pairs: func(n *yaml.Node, _ string) ([]yamljson.Pair, error) {
			var out []yamljson.Pair
			for i := len(n.Content) - 2; i >= 0; i -= 2 {
				out = append(out, yamljson.Pair{Key: n.Content[i], Value: n.Content[i+1]})
			}
			return out, nil
		}}
		got, err := yamljson.Append(nil, parse(t, "{a: 1, b: {c: 2, d: 3}}"), "", o)
		require.NoError(t, err)
		assert.Equal(t, `{"b":{"d":3,"c":2},"a":1}`, string(got))
	})
	t.Run("string", func(t *testing.T) {
		o := yamljson.Options{String: func(n *yaml.Node, _ string) (string, error) { return strings.ToUpper(n.Value), nil }}
		got, err := yamljson.Append(nil, parse(t, "{key: [value, 1, 2001-12-14]}"), "", o)
		require.NoError(t, err)
		assert.Equal(t, `{"key":["VALUE",1,"2001-12-14"]}`, string(got), "keys and timestamps as written")
	})
	hooks := map[string]yamljson.Options{
		"enter":  {Enter: func(n *yaml.Node, _ string) (*yaml.Node, func(), error) { return n, func() {}, errHook }},
		"pairs":  {Pairs: func(*yaml.Node, string) ([]yamljson.Pair, error) { return nil, errHook }},
		"string": {String: func(*yaml.Node, string) (string, error) { return "", errHook }},
	}
	for name, o := range hooks {
		t.Run(name+" error", func(t *testing.T) {
			_, err := yamljson.Append(nil, parse(t, "{a: x}"), "root", o)
			require.ErrorIs(t, err, errHook)
			e, ok := errors.AsType[*yamljson.Error](err)
			require.True(t, ok)
			assert.Equal(t, "hook refused", e.Msg)
			assert.NotEmpty(t, e.Path)
			assert.NotNil(t, e.Node)
		})
	}
	t.Run("a hook's own *Error passes unchanged", func(t *testing.T) {
		own := &yamljson.Error{Path: "elsewhere", Msg: "placed"}
		o := yamljson.Options{String: func(*yaml.Node, string) (string, error) { return "", own }}
		_, err := yamljson.Append(nil, parse(t, "[x]"), "", o)
		assert.Same(t, own, err)
	})
}

func TestPaths(t *testing.T) {
	assert.Equal(t, "a", yamljson.Join("", "a"))
	assert.Equal(t, "a.b", yamljson.Join("a", "b"))
	assert.Equal(t, "a[3]", yamljson.Index("a", 3))
	assert.Equal(t, "[0]", yamljson.Index("", 0))
	for give, want := range map[string]string{"{a: [1, .inf]}": "a[1]", "[{b: .nan}]": "[0].b", ".inf": ""} {
		_, err := yamljson.Append(nil, parse(t, give), "", yamljson.Options{})
		e, ok := errors.AsType[*yamljson.Error](err)
		require.True(t, ok, "%s: %v", give, err)
		assert.Equal(t, want, e.Path, "path of the error in %s, from the root", give)
	}
}

func TestDescribe(t *testing.T) {
	tests := map[string]struct {
		give string
		want string
	}{
		"mapping":   {give: "{}", want: "a mapping"},
		"list":      {give: "[]", want: "a list"},
		"string":    {give: "'x'", want: `the string "x"`},
		"integer":   {give: "3", want: "the integer 3"},
		"float":     {give: "1.5", want: "the number 1.5"},
		"boolean":   {give: "true", want: "the boolean true"},
		"null":      {give: "~", want: "null"},
		"timestamp": {give: "2001-12-14", want: "the timestamp 2001-12-14"},
		"local tag": {give: "!x y", want: "a value tagged !x"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tt.want, yamljson.Describe(parse(t, tt.give)))
		})
	}
	alias := parse(t, "[&a x, *a]").Content[1]
	assert.Equal(t, "the alias *a", yamljson.Describe(alias))
	assert.Equal(t, "a document", yamljson.Describe(&yaml.Node{Kind: yaml.DocumentNode}))
	assert.Equal(t, "an empty node", yamljson.Describe(&yaml.Node{}))
}

// FuzzAppend converts arbitrary YAML: it never panics, and what it writes is JSON.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"{a: [1, 2.5, x]}", "&x {a: [*x]}", "[1e400, 0x10, .inf]", "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var doc yaml.Node
		if yaml.Unmarshal([]byte(text), &doc) != nil || len(doc.Content) == 0 {
			return
		}
		fuzzguard.Run(len(text), func() {
			budget := 10_000
			got, err := yamljson.Append(nil, doc.Content[0], "", yamljson.Options{MaxDepth: 64, MaxBytes: 1 << 16, Budget: &budget})
			if err != nil {
				if e, ok := errors.AsType[*yamljson.Error](err); !ok || e.Node == nil || e.Msg == "" {
					t.Fatalf("error %v is not an *Error with a node and a message", err)
				}
				return
			}
			if !json.Valid(got) {
				t.Fatalf("%q converts to %s, which is not JSON", text, got)
			}
		})
	})
}
