package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentrun/agentrun/protocol"
)

// TodoStatus is the state of one todo item.
type TodoStatus string

// The todo states.
const (
	TodoPending    TodoStatus = "pending"
	TodoInProgress TodoStatus = "in_progress"
	TodoCompleted  TodoStatus = "completed"
)

// Todo is one item of a TodoWrite list.
type Todo struct {
	// Content is what is to be done, in the imperative ("Run the tests").
	Content string `json:"content"`
	// Status is pending, in_progress or completed.
	Status TodoStatus `json:"status"`
	// ActiveForm is the present continuous form ("Running the tests"), optional.
	ActiveForm string `json:"activeForm,omitempty"`
}

// todoList is the todos member. Models sometimes send the array as a JSON string;
// that is accepted too.
type todoList []Todo

// UnmarshalJSON accepts an array of todos or a string holding one.
func (l *todoList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		b = []byte(s)
	}
	var items []Todo
	if err := json.Unmarshal(b, &items); err != nil {
		return err
	}
	*l = items
	return nil
}

// TodoWrite is the TodoWrite tool: it validates the model's task list and renders
// it as a markdown checklist. The list is not stored: the model reads it back from
// earlier results.
type TodoWrite struct{}

type todoInput struct {
	Todos *todoList `json:"todos"`
}

// Spec describes TodoWrite.
func (TodoWrite) Spec() protocol.ToolSpec {
	return protocol.ToolSpec{
		Name: "TodoWrite",
		Description: "Write the complete task list for the current work, replacing the previous one. Each item has " +
			"content, a status (pending, in_progress or completed) and optionally activeForm (the item in the present " +
			"continuous, e.g. \"Running tests\"). At most one item may be in_progress. Use it for work with several " +
			"steps; mark items completed as soon as they are done.",
		InputSchema: schema(`"todos":{"type":"array","items":{"type":"object","properties":{`+
			`"content":{"type":"string","minLength":1},`+
			`"status":{"type":"string","enum":["pending","in_progress","completed"]},`+
			`"activeForm":{"type":"string"}},"required":["content","status"]}}`, "todos"),
	}
}

// Run validates and renders the list.
func (TodoWrite) Run(_ context.Context, call Call) Result {
	var in todoInput
	if err := decodeInput(call.Input, &in); err != nil {
		return failure(err.Error())
	}
	if in.Todos == nil {
		return failure("no todos provided")
	}
	todos := *in.Todos
	if err := validateTodos(todos); err != nil {
		return failure(err.Error())
	}
	done := 0
	var b strings.Builder
	for _, t := range todos {
		box := " "
		switch t.Status {
		case TodoCompleted:
			box = "x"
			done++
		case TodoInProgress:
			box = "~"
		case TodoPending:
		}
		fmt.Fprintf(&b, "- [%s] %s\n", box, strings.TrimSpace(t.Content))
	}
	if len(todos) == 0 {
		b.WriteString("(no todos)\n")
	}
	fmt.Fprintf(&b, "%d/%d completed", done, len(todos))
	return Result{Content: b.String()}
}

// validateTodos checks every item and returns all problems together.
func validateTodos(todos []Todo) error {
	var errs []error
	var active []string
	for i, t := range todos {
		if strings.TrimSpace(t.Content) == "" {
			errs = append(errs, fmt.Errorf("todos[%d]: content is empty", i))
		}
		switch t.Status {
		case TodoPending, TodoCompleted:
		case TodoInProgress:
			active = append(active, fmt.Sprint(i))
		case "":
			errs = append(errs, fmt.Errorf("todos[%d]: status is missing; want pending, in_progress or completed", i))
		default:
			errs = append(errs, fmt.Errorf("todos[%d]: status %q is not pending, in_progress or completed", i, t.Status))
		}
	}
	if len(active) > 1 {
		errs = append(errs, fmt.Errorf("%d todos are in_progress (todos[%s]); at most one may be", len(active), strings.Join(active, "], todos[")))
	}
	return errors.Join(errs...)
}
