package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTodoWrite(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		give string
		want string
	}{
		"checklist": {
			give: `{"todos":[{"content":"Read the code","status":"completed"},` +
				`{"content":"Fix the bug","status":"in_progress","activeForm":"Fixing the bug"},` +
				`{"content":"Run the tests","status":"pending"}]}`,
			want: "- [x] Read the code\n- [~] Fix the bug\n- [ ] Run the tests\n1/3 completed",
		},
		"all done": {
			give: `{"todos":[{"content":"a","status":"completed"},{"content":"b","status":"completed"}]}`,
			want: "- [x] a\n- [x] b\n2/2 completed",
		},
		"empty list": {
			give: `{"todos":[]}`, want: "(no todos)\n0/0 completed",
		},
		"list as a string": {
			give: `{"todos":"[{\"content\":\"a\",\"status\":\"pending\"}]"}`,
			want: "- [ ] a\n0/1 completed",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			res := TodoWrite{}.Run(context.Background(), Call{Input: json.RawMessage(tt.give)})
			assert.False(t, res.IsError, res.Content)
			assert.Equal(t, tt.want, res.Content)
		})
	}
}

func TestTodoWriteValidation(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		give string
		want string
	}{
		"no todos":        {give: `{}`, want: "no todos provided"},
		"null todos":      {give: `{"todos":null}`, want: "no todos provided"},
		"empty content":   {give: `{"todos":[{"content":"  ","status":"pending"}]}`, want: "todos[0]: content is empty"},
		"missing status":  {give: `{"todos":[{"content":"a"}]}`, want: "todos[0]: status is missing; want pending, in_progress or completed"},
		"unknown status":  {give: `{"todos":[{"content":"a","status":"done"}]}`, want: `todos[0]: status "done" is not pending, in_progress or completed`},
		"two in progress": {give: `{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"pending"},{"content":"c","status":"in_progress"}]}`, want: "2 todos are in_progress (todos[0], todos[2]); at most one may be"},
		"all problems": {
			give: `{"todos":[{"content":"","status":"x"},{"content":"b"}]}`,
			want: "todos[0]: content is empty\ntodos[0]: status \"x\" is not pending, in_progress or completed\ntodos[1]: status is missing; want pending, in_progress or completed",
		},
		"not a list":    {give: `{"todos":{"content":"a"}}`, want: "invalid input: json: cannot unmarshal object into Go struct field todoInput.todos of type []tools.Todo"},
		"bad string":    {give: `{"todos":"not json"}`, want: "invalid input: invalid character 'o' in literal null (expecting 'u')"},
		"not an object": {give: `"todos"`, want: "invalid input: json: cannot unmarshal string into Go value of type tools.todoInput"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			res := TodoWrite{}.Run(context.Background(), Call{Input: json.RawMessage(tt.give)})
			assert.True(t, res.IsError)
			assert.Equal(t, tt.want, res.Content)
		})
	}
}
