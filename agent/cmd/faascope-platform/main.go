// Command faascope-platform is the local FaaS platform: the AWS Lambda API on loopback, with
// each function instance in a sandbox with real CPU, memory and /tmp limits.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/faascope/faascope/agent/platform"
	"github.com/faascope/faascope/agent/platform/lambdaapi"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == platform.SandboxInitArg {
		if err := platform.RunSandboxInit(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "sandbox init:", err)
			os.Exit(127)
		}
		return
	}
	if handled, err := platform.RunProbe(os.Args); handled { // syscallcost.go, closecost.go
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(127)
		}
		return
	}
	os.Exit(run())
}

func run() int {
	fs := flag.NewFlagSet("faascope-platform", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:9001", "host:port of the Lambda API (loopback unless you mean otherwise)")
	profile := fs.String("profile", platform.ProfileLambda, "default sandbox profile: lambda, gcf or unlimited")
	dataDir := fs.String("data-dir", defaultDataDir(), "functions, sandboxes and logs")
	keepAlive := fs.Duration("keep-alive", 5*time.Minute, "idle time before an instance is evicted")
	concurrency := fs.Int("concurrency", 1000, "account concurrency limit; beyond it invocations are throttled (HTTP 429)")
	isolation := fs.String("isolation", "auto", "namespaces (real limits, needs root), none (plain processes), or auto")
	readyFile := fs.String("ready-file", "", "write {\"endpoint\",\"pid\"} here once serving; removed when the platform ends")
	readyExtra := fs.String("ready-extra", "", "a JSON object whose fields are added to --ready-file's (faascope: the process's identity)")
	network := fs.String("network", "isolated", "isolated (a network namespace per sandbox) or host")
	expose := fs.String("expose", "", "comma-separated host loopback ports every sandbox may reach (e.g. 9000,6379)")
	netShape := fs.String("net-shape", "profile", "default token-bucket shaping: profile (each sandbox its profile's calibrated bucket), none, lambda, or size=B,refill_ms=N[,one_time_burst=B][,peak=B/s]")
	token := fs.Bool("require-token", false, "require the token in $FAASCOPE_PLATFORM_TOKEN on every API call (as the AWS access key id, or a bearer token)")
	runtimesDir := fs.String("runtimes-dir", "", "the managed runtimes' directory, one subdirectory a family (python, nodejs) with its bootstrap and AWS's runtime interface client (faascope passes src/faascope/_runtimes); \"\" = provided.* only")
	listRuntimes := fs.Bool("list-runtimes", false, "print the runtimes this platform runs (JSON) and exit")
	sharedDir := fs.String("shared-dir", "", "directory mounted read-write at /mnt/shared in every sandbox (EFS stand-in)")
	s3Endpoint := fs.String("s3-endpoint", "", "S3 endpoint (http://127.0.0.1:PORT) to read Code.S3Bucket/S3Key packages from; keys in $FAASCOPE_PLATFORM_S3_ACCESS_KEY_ID and $FAASCOPE_PLATFORM_S3_SECRET_ACCESS_KEY (anonymous without)")
	s3Region := fs.String("s3-region", "us-east-1", "signing region of --s3-endpoint")
	spareSandboxes := fs.Int("spare-sandboxes", platform.DefaultSpareSandboxes, "sandboxes made ahead for cold starts (namespaces, cgroup, process), refilled in the background; 0 for none")
	asyncRetries := fs.String("async-retry-delays", "1m,2m", "waits before the retries of a failed Event invocation (Lambda's: 1m,2m; \"\" for none)")
	updateWindow := fs.Duration("update-window", platform.DefaultUpdateWindow, "least time an UpdateFunctionCode/UpdateFunctionConfiguration stays LastUpdateStatus InProgress (AWS's updates take seconds; not a measured AWS figure); 0 = only as long as its work takes")
	calibration := fs.String("calibration", "", "the calibrated profiles' figures, as faascope.calibration.platform_calibration writes them (block I/O limits, modelled cold start, network token bucket, shared file system budget); \"\" = uncalibrated")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if *listRuntimes {
		b, _ := json.Marshal(platform.Runtimes)
		fmt.Println(string(b))
		return 0
	}
	if *token && os.Getenv("FAASCOPE_PLATFORM_TOKEN") == "" {
		fmt.Fprintln(os.Stderr, "--require-token: set FAASCOPE_PLATFORM_TOKEN (a token on the command line would show in ps)")
		return 2
	}
	if !*token {
		os.Unsetenv("FAASCOPE_PLATFORM_TOKEN")
	}
	iso, err := chooseIsolation(*isolation)
	if err != nil {
		fmt.Fprintln(os.Stderr, "--isolation:", err)
		return 2
	}
	if *network != "isolated" && *network != "host" {
		fmt.Fprintf(os.Stderr, "--network: %q is not one of isolated, host\n", *network)
		return 2
	}
	ports, err := platform.ParsePorts(*expose)
	if err != nil {
		fmt.Fprintln(os.Stderr, "--expose:", err)
		return 2
	}
	var cal *platform.Calibration
	if *calibration != "" {
		if cal, err = platform.LoadCalibration(*calibration); err != nil {
			fmt.Fprintln(os.Stderr, "--calibration:", err)
			return 2
		}
	}
	if _, err := platform.ParseNetShape(*netShape, cal); err != nil {
		fmt.Fprintln(os.Stderr, "--net-shape:", err)
		return 2
	}
	retryDelays := []time.Duration{}
	for _, v := range strings.Split(*asyncRetries, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			fmt.Fprintf(os.Stderr, "--async-retry-delays: %q is not a duration\n", v)
			return 2
		}
		retryDelays = append(retryDelays, d)
	}
	if *updateWindow < 0 {
		fmt.Fprintln(os.Stderr, "--update-window: must not be negative")
		return 2
	}
	if before, after, err := platform.RaiseFDLimit(); err != nil {
		log.Printf("RLIMIT_NOFILE stays %d: %v", before, err)
	} else if after > before {
		log.Printf("RLIMIT_NOFILE %d -> %d (warm instances hold ~8 descriptors each)", before, after)
	}
	p, err := platform.New(platform.Config{DataDir: *dataDir, Listen: *listen, DefaultProfile: *profile,
		KeepAlive: *keepAlive, Concurrency: *concurrency, Isolation: iso, HostNetwork: *network == "host",
		Expose: ports, NetShape: *netShape, SharedDir: *sharedDir, RuntimesDir: *runtimesDir, Token: os.Getenv("FAASCOPE_PLATFORM_TOKEN"),
		// Keys through the environment, not argv (argv is world-readable in /proc).
		S3: platform.S3Config{Endpoint: *s3Endpoint, Region: *s3Region,
			AccessKeyID: os.Getenv("FAASCOPE_PLATFORM_S3_ACCESS_KEY_ID"), SecretAccessKey: os.Getenv("FAASCOPE_PLATFORM_S3_SECRET_ACCESS_KEY")},
		AsyncRetryDelays: retryDelays, SpareSandboxes: *spareSandboxes, Calibration: cal, UpdateWindow: *updateWindow})
	if err != nil {
		fmt.Fprintln(os.Stderr, "faascope-platform:", err)
		return 2
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "--listen:", err)
		p.Close()
		return 1
	}
	endpoint := "http://" + ln.Addr().String()
	log.Printf("faascope platform on %s (profile %s, isolation %s, keep-alive %s, data %s)",
		endpoint, *profile, iso, *keepAlive, *dataDir)
	if iso == "none" {
		log.Printf("WARNING: isolation none: no CPU, memory or /tmp limits are enforced")
	}
	if *readyFile != "" {
		doc := map[string]any{}
		if *readyExtra != "" {
			if err := json.Unmarshal([]byte(*readyExtra), &doc); err != nil {
				fmt.Fprintln(os.Stderr, "--ready-extra:", err)
				return 2
			}
		}
		for k, v := range map[string]any{"endpoint": endpoint, "pid": os.Getpid(), "isolation": iso,
			"profile": *profile, "data_dir": *dataDir} {
			doc[k] = v
		}
		b, _ := json.Marshal(doc)
		if err := os.WriteFile(*readyFile, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "--ready-file:", err)
			return 2
		}
		// A platform that has ended is not ready: `faascope platform status` reads this file
		// (a foreground platform's state), so it goes with the platform, unless another
		// platform has written its own there since. A SIGKILLed platform leaves it behind;
		// faascope then checks the pid and its start time (faascope.processes.is_process).
		defer func() {
			if cur, err := os.ReadFile(*readyFile); err == nil && bytes.Equal(cur, b) {
				os.Remove(*readyFile)
			}
		}()
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := p.Serve(ctx, ln, lambdaapi.Handler(p)); err != nil {
		log.Printf("serve: %v", err)
		return 1
	}
	return 0
}

func chooseIsolation(v string) (string, error) {
	switch v {
	case "namespaces", "none":
		if v == "namespaces" && (os.Geteuid() != 0 || platform.CgroupVersion() == 0) {
			return "", fmt.Errorf("namespaces need root and a mounted cgroup hierarchy")
		}
		return v, nil
	case "auto":
		if os.Geteuid() == 0 && platform.CgroupVersion() != 0 {
			return "namespaces", nil
		}
		return "none", nil
	}
	return "", fmt.Errorf("%q is not one of namespaces, none, auto", v)
}

func defaultDataDir() string {
	if d := os.Getenv("FAASCOPE_DATA_DIR"); d != "" {
		return filepath.Join(d, "platform")
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "faascope", "platform")
	}
	return filepath.Join(os.TempDir(), "faascope-platform")
}
