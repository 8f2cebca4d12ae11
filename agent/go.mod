module github.com/faascope/faascope/agent

go 1.22

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2
	golang.org/x/sys v0.30.0
)

require golang.org/x/text v0.14.0 // indirect
