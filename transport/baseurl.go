package transport

import (
	"net/url"
	"strings"
)

// APIRoot returns the API root for a configured base URL: def when base is empty, and
// base with "/v1" added when it names only a host, which is how the official SDKs,
// Claude Code and Ollama's documentation write ANTHROPIC_BASE_URL
// ("http://host:port"). A base with any path is taken as the root itself
// ("http://host:port/v1", "https://openrouter.ai/api/v1"). A trailing slash is
// dropped.
func APIRoot(base, def string) string {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	if base == "" {
		return def
	}
	if u, err := url.Parse(base); err == nil && u.Host != "" && (u.Path == "" || u.Path == "/") && u.RawQuery == "" {
		return base + "/v1"
	}
	return base
}

// requestURL is the URL of a request as an error message may show it: without user
// information, query or fragment, where credentials may hide.
func requestURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = nil, "", false, "", ""
	return c.String()
}
