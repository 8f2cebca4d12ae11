package platform

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func TestCodeFromS3IsRefusedWithoutAnEndpoint(t *testing.T) {
	tp := startPlatform(t, Config{})
	s3code := map[string]string{"S3Bucket": "b", "S3Key": "k.zip"}
	resp, body := tp.call("POST", "/2015-03-31/functions", map[string]any{"FunctionName": "froms3", "Runtime": "provided.al2023",
		"Role": "arn:aws:iam::000000000000:role/r", "Handler": "h", "Code": s3code}, nil)
	wantAPIError(t, "CreateFunction", resp, body, 400, "InvalidParameterValueException", "--s3-endpoint")
	resp, body = tp.call("POST", "/2018-10-31/layers/l/versions", map[string]any{"Content": s3code}, nil)
	wantAPIError(t, "PublishLayerVersion", resp, body, 400, "InvalidParameterValueException", "--s3-endpoint")
	tp.create("inline", nil)
	resp, body = tp.call("PUT", "/2015-03-31/functions/inline/code", s3code, nil)
	wantAPIError(t, "UpdateFunctionCode", resp, body, 400, "InvalidParameterValueException", "--s3-endpoint")
	resp, body = tp.call("PUT", "/2015-03-31/functions/inline/code", map[string]string{"S3Bucket": "b"}, nil)
	wantAPIError(t, "a bucket without a key", resp, body, 400, "InvalidParameterValueException", "S3Key")
}

// versityGW starts the S3 stand-in faascope uses (VersityGW, posix backend) with one bucket, or
// skips: $FAASCOPE_VERSITYGW, versitygw on PATH, or faascope's cached build.
func versityGW(t *testing.T, bucket string) S3Config {
	t.Helper()
	bin := os.Getenv("FAASCOPE_VERSITYGW")
	if bin == "" {
		bin, _ = exec.LookPath("versitygw")
	}
	if bin == "" {
		home, _ := os.UserHomeDir()
		found, _ := filepath.Glob(filepath.Join(home, ".cache", "faascope", "bin", "versitygw-*", "versitygw"))
		if len(found) == 0 {
			t.Skip("no VersityGW binary (set FAASCOPE_VERSITYGW, or run `faascope standins start --only s3` once)")
		}
		bin = found[0]
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	for _, d := range []string{filepath.Join(root, bucket), filepath.Join(dir, "sidecar")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cfg := S3Config{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), Region: "us-east-1",
		AccessKeyID: "faascope", SecretAccessKey: "LocalStandInSecretKey/NotAnAWSKey/000000"}
	cmd := exec.Command(bin, "--port", "127.0.0.1:"+strconv.Itoa(port), "--region", cfg.Region, "--quiet", "posix",
		"--sidecar", filepath.Join(dir, "sidecar"), root)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+cfg.AccessKeyID, "ROOT_SECRET_ACCESS_KEY="+cfg.SecretAccessKey)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(20 * time.Second); ; {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("VersityGW did not listen: %s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cfg
}

func putObject(t *testing.T, cfg S3Config, bucket, key string, data []byte) {
	t.Helper()
	src, err := newS3Source(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket),
		Key: aws.String(key), Body: bytes.NewReader(data)}); err != nil {
		t.Fatal(err)
	}
}

func TestCodeFromS3(t *testing.T) {
	cfg := versityGW(t, "deploy")
	putObject(t, cfg, "deploy", "agent.zip", agentZip)
	runtimeZip := zipOf(map[string]string{"bootstrap": testRuntimeFile(t)}, nil)
	putObject(t, cfg, "deploy", "runtime.zip", runtimeZip)
	layerZip := zipOf(nil, map[string][]byte{"from-s3.txt": []byte("layer from S3")})
	putObject(t, cfg, "deploy", "layer.zip", layerZip)
	putObject(t, cfg, "deploy", "notzip.zip", []byte("not a zip"))
	tp := startPlatform(t, Config{S3: cfg})

	tp.create("froms3", map[string]any{"Code": map[string]string{"S3Bucket": "deploy", "S3Key": "agent.zip"}})
	fn, _ := tp.GetFunction(ref("froms3"))
	if fn.Config.CodeSize != int64(len(agentZip)) {
		t.Fatalf("CodeSize %d, want %d", fn.Config.CodeSize, len(agentZip))
	}
	if _, r, body := tp.invoke("froms3", `{"workload":{"kind":"noop"}}`); !r.OK {
		t.Fatalf("invoke the function read from S3: %s", body)
	}

	resp, body := tp.call("POST", "/2018-10-31/layers/s3layer/versions", map[string]any{
		"Content": map[string]string{"S3Bucket": "deploy", "S3Key": "layer.zip"}}, nil)
	if resp.StatusCode != 201 || !strings.Contains(string(body), `"CodeSize":`+strconv.Itoa(len(layerZip))) {
		t.Fatalf("PublishLayerVersion from S3: %d %s", resp.StatusCode, body)
	}
	if resp, body = tp.call("PUT", "/2015-03-31/functions/froms3/configuration", map[string]any{
		"Layers": []string{layerVersionARN("s3layer", 1)}}, nil); resp.StatusCode != 200 {
		t.Fatalf("use the layer: %d %s", resp.StatusCode, body)
	}
	waitReady(t, tp.Platform, "froms3") // as boto3's function_updated_v2 waiter does
	resp, body = tp.call("PUT", "/2015-03-31/functions/froms3/code", map[string]string{"S3Bucket": "deploy", "S3Key": "runtime.zip"}, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"CodeSize":`+strconv.Itoa(len(runtimeZip))) {
		t.Fatalf("UpdateFunctionCode from S3: %d %s", resp.StatusCode, body)
	}
	waitReady(t, tp.Platform, "froms3")
	if _, r, body := tp.invokeRuntime("froms3", map[string]any{"read": []string{"/opt/from-s3.txt"}}); r.Files["/opt/from-s3.txt"] != "layer from S3" {
		t.Fatalf("the new code from S3 with the layer from S3: %s", body)
	}

	for _, c := range []struct{ bucket, key, version, want string }{
		{"deploy", "missing.zip", "", "Error occurred while GetObject. S3 Error Code: NoSuchKey. S3 Error Message: The specified key does not exist."},
		{"nobucket", "agent.zip", "", "Error occurred while GetObject. S3 Error Code: NoSuchBucket."},
		{"deploy", "notzip.zip", "", "Could not unzip uploaded file."},
	} {
		resp, body := tp.call("POST", "/2015-03-31/functions", map[string]any{"FunctionName": "bad", "Runtime": "provided.al2023",
			"Role": "arn:aws:iam::000000000000:role/r", "Handler": "h", "Code": map[string]string{"S3Bucket": c.bucket, "S3Key": c.key}}, nil)
		wantAPIError(t, c.bucket+"/"+c.key, resp, body, 400, "InvalidParameterValueException", c.want)
	}
	resp, body = tp.call("POST", "/2015-03-31/functions", map[string]any{"FunctionName": "both", "Runtime": "provided.al2023",
		"Role": "arn:aws:iam::000000000000:role/r", "Handler": "h", "Code": map[string]string{"S3Bucket": "deploy", "S3Key": "agent.zip", "ZipFile": b64(agentZip)}}, nil)
	wantAPIError(t, "ZipFile and S3", resp, body, 400, "InvalidParameterValueException", "not both")
	if entries, _ := os.ReadDir(tp.store.stagingDir()); len(entries) != 0 {
		t.Fatalf("refused packages leave nothing in staging: %d files", len(entries))
	}
}
