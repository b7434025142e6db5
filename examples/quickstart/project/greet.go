// Package greet builds greetings and name tags.
package greet

import "strings"

// Hello returns a greeting for name, or for the world when name is empty.
func Hello(name string) string {
	if name == "" {
		name = "world"
	}
	return "Hello, " + name + "!"
}

// Initials returns the upper-case initials of a full name: "Ada Lovelace" gives "AL".
func Initials(fullName string) string {
	var b strings.Builder
	for _, word := range strings.Split(fullName, " ") {
		b.WriteString(strings.ToUpper(word[:1]))
	}
	return b.String()
}
