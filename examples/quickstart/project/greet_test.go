package greet

import "testing"

func TestHello(t *testing.T) {
	tests := map[string]struct{ give, want string }{
		"name":  {give: "Ada", want: "Hello, Ada!"},
		"empty": {give: "", want: "Hello, world!"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Hello(tt.give); got != tt.want {
				t.Errorf("Hello(%q) = %q, want %q", tt.give, got, tt.want)
			}
		})
	}
}

func TestInitials(t *testing.T) {
	tests := map[string]struct{ give, want string }{
		"two words":   {give: "Ada Lovelace", want: "AL"},
		"lower case":  {give: "grace hopper", want: "GH"},
		"three words": {give: "Edsger Wybe Dijkstra", want: "EWD"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Initials(tt.give); got != tt.want {
				t.Errorf("Initials(%q) = %q, want %q", tt.give, got, tt.want)
			}
		})
	}
}
