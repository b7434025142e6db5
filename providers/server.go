package providers

import (
	"net"
	"net/url"

	"github.com/agentrun/agentrun/transport/anthropic"
	"github.com/agentrun/agentrun/transport/openai"
)

// serverOf is the host and port a provider choice talks to, for the spans of its model
// calls; empty for the in-process scripted model.
func serverOf(c providerChoice) string {
	base := c.baseURL
	switch {
	case c.name == "scripted":
		return ""
	case base != "":
	case c.name == "anthropic":
		base = anthropic.DefaultBaseURL
	default:
		base = openai.DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || u.Hostname() == "" {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}
