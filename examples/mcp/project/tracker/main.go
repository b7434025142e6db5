// Command tracker is the project's issue tracker as an MCP server on stdio: it keeps
// the issues in issues.json, in the folder it runs in, and offers the tools
// list_issues, get_issue and comment. It is built with the official Go SDK.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Issue is one issue of the tracker.
type Issue struct {
	ID       int      `json:"id"`
	Title    string   `json:"title"`
	Body     string   `json:"body"`
	State    string   `json:"state"`
	Comments []string `json:"comments"`
}

type store struct {
	mu     sync.Mutex
	Issues []Issue `json:"issues"`
}

const file = "issues.json"

func (s *store) load() error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, s)
}

func (s *store) save() error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(b, '\n'), 0o644)
}

func (s *store) find(id int) (*Issue, error) {
	for i := range s.Issues {
		if s.Issues[i].ID == id {
			return &s.Issues[i], nil
		}
	}
	return nil, fmt.Errorf("no issue %d", id)
}

type none struct{}

type byID struct {
	ID int `json:"id" jsonschema:"the issue's number"`
}

type commentIn struct {
	ID    int    `json:"id" jsonschema:"the issue's number"`
	Text  string `json:"text" jsonschema:"the comment"`
	Close bool   `json:"close,omitempty" jsonschema:"close the issue too"`
}

type summary struct {
	Issues []Issue `json:"issues"`
}

func main() {
	s := &store{}
	if err := s.load(); err != nil {
		log.Fatalf("tracker: %v", err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "tracker", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "list_issues", Description: "Lists the open issues."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, summary, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			var open []Issue
			for _, is := range s.Issues {
				if is.State == "open" {
					open = append(open, is)
				}
			}
			return nil, summary{Issues: open}, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "get_issue", Description: "Shows one issue with its comments."},
		func(_ context.Context, _ *mcp.CallToolRequest, in byID) (*mcp.CallToolResult, Issue, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			is, err := s.find(in.ID)
			if err != nil {
				return nil, Issue{}, err
			}
			return nil, *is, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "comment", Description: "Comments on an issue, and closes it when asked."},
		func(_ context.Context, _ *mcp.CallToolRequest, in commentIn) (*mcp.CallToolResult, any, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			is, err := s.find(in.ID)
			if err != nil {
				return nil, nil, err
			}
			is.Comments = append(is.Comments, in.Text)
			if in.Close {
				is.State = "closed"
			}
			if err := s.save(); err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("commented on issue %d (%s)", is.ID, is.State)}}}, nil, nil
		})
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatalf("tracker: %v", err)
	}
}
