package tools

// Builtin returns the built-in tools in the order they are offered to the model:
// Read, Write, Edit, Bash, Glob, Grep, TodoWrite.
func Builtin() []Tool {
	return []Tool{Read{}, Write{}, Edit{}, Bash{}, Glob{}, Grep{}, TodoWrite{}}
}

// Lookup returns the built-in tool with the given name.
func Lookup(name string) (Tool, bool) {
	for _, t := range Builtin() {
		if t.Spec().Name == name {
			return t, true
		}
	}
	return nil, false
}
