module github.com/agentrun/agentrun

go 1.26
