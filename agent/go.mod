module github.com/faascope/faascope/agent

go 1.24

require (
	github.com/aws/aws-sdk-go-v2 v1.39.2
	github.com/aws/aws-sdk-go-v2/service/dynamodb v1.51.0
	github.com/aws/aws-sdk-go-v2/service/s3 v1.88.4
	github.com/aws/smithy-go v1.23.0
	// cilium/ebpf: loads the platform's one BPF program (a tracepoint that posts each request to a
	// sandbox's /tmp device, agent/platform/devicecpu.go) in pure Go, with CGO off
	github.com/cilium/ebpf v0.19.0
	github.com/hanwen/go-fuse/v2 v2.12.1
	github.com/redis/go-redis/v9 v9.14.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2
	golang.org/x/sys v0.31.0
	golang.org/x/time v0.11.0
)

require (
	github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream v1.7.1 // indirect
	github.com/aws/aws-sdk-go-v2/internal/configsources v1.4.9 // indirect
	github.com/aws/aws-sdk-go-v2/internal/endpoints/v2 v2.7.9 // indirect
	github.com/aws/aws-sdk-go-v2/internal/v4a v1.4.9 // indirect
	github.com/aws/aws-sdk-go-v2/service/internal/accept-encoding v1.13.1 // indirect
	github.com/aws/aws-sdk-go-v2/service/internal/checksum v1.9.0 // indirect
	github.com/aws/aws-sdk-go-v2/service/internal/endpoint-discovery v1.11.9 // indirect
	github.com/aws/aws-sdk-go-v2/service/internal/presigned-url v1.13.9 // indirect
	github.com/aws/aws-sdk-go-v2/service/internal/s3shared v1.19.9 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	golang.org/x/text v0.14.0 // indirect
)
