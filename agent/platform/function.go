package platform

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// FunctionConfiguration is Lambda's FunctionConfiguration shape, as boto3 and the AWS CLI read it.
type FunctionConfiguration struct {
	FunctionName     string            `json:"FunctionName"`
	FunctionArn      string            `json:"FunctionArn"`
	Runtime          string            `json:"Runtime"`
	Role             string            `json:"Role"`
	Handler          string            `json:"Handler"`
	CodeSize         int64             `json:"CodeSize"`
	CodeSha256       string            `json:"CodeSha256"`
	Description      string            `json:"Description"`
	Timeout          int               `json:"Timeout"`
	MemorySize       int               `json:"MemorySize"`
	LastModified     string            `json:"LastModified"`
	Version          string            `json:"Version"`
	Environment      *Environment      `json:"Environment,omitempty"`
	State            string            `json:"State"`
	LastUpdateStatus string            `json:"LastUpdateStatus"`
	PackageType      string            `json:"PackageType"`
	Architectures    []string          `json:"Architectures"`
	EphemeralStorage EphemeralStorage  `json:"EphemeralStorage"`
	RevisionId       string            `json:"RevisionId"`
}

type Environment struct {
	Variables map[string]string `json:"Variables"`
}

type EphemeralStorage struct {
	Size int `json:"Size"`
}

// Function is a deployed function: its configuration, tags and package on disk.
type Function struct {
	Config     FunctionConfiguration `json:"config"`
	Tags       map[string]string     `json:"tags"`
	Generation int                   `json:"generation"` // bumps on every update; older instances retire
}

// Tags that steer the local platform per function (AWS keeps them as ordinary tags).
const (
	TagProfile   = "faascope:profile"
	TagKeepAlive = "faascope:keep-alive" // seconds an idle instance stays warm
	TagExpose    = "faascope:expose"     // host loopback ports the function may reach: "9000,6379", or "9002:9001" to map
	TagNetShape  = "faascope:net-shape"  // "none", "lambda" or "size=…,refill_ms=…[,one_time_burst=…][,peak=…]"
)

// Lambda's limits for the fields this platform honours.
const (
	minMemoryMB, maxMemoryMB       = 128, 10240
	minEphemeralMB, maxEphemeralMB = 512, 10240
	minTimeoutS, maxTimeoutS       = 1, 900
	defaultTimeoutS                = 3
	defaultMemoryMB                = 128
)

var functionNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

const accountID = "000000000000"

func functionARN(name string) string {
	return "arn:aws:lambda:us-east-1:" + accountID + ":function:" + name
}

// lambdaTime is the timestamp format of LastModified.
func lambdaTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000-0700") }

func newRevision() string {
	b := make([]byte, 16)
	rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func codeSha256(zip []byte) string {
	s := sha256.Sum256(zip)
	return base64.StdEncoding.EncodeToString(s[:])
}

// functionStore persists functions under dataDir/functions/<name>/ so a restarted platform
// still knows them.
type functionStore struct{ dir string }

func (s functionStore) codePath(name string) string {
	return filepath.Join(s.dir, name, "code.zip")
}

func (s functionStore) save(f *Function, zip []byte) error {
	d := filepath.Join(s.dir, f.Config.FunctionName)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return err
	}
	if zip != nil {
		if err := writeAtomic(s.codePath(f.Config.FunctionName), zip); err != nil {
			return err
		}
	}
	b, _ := json.MarshalIndent(f, "", " ")
	return writeAtomic(filepath.Join(d, "function.json"), b)
}

func (s functionStore) remove(name string) error {
	return os.RemoveAll(filepath.Join(s.dir, name))
}

func (s functionStore) loadAll() (map[string]*Function, error) {
	out := map[string]*Function{}
	entries, err := os.ReadDir(s.dir)
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(s.dir, e.Name(), "function.json"))
		if err != nil {
			continue // a half-created function: CreateFunction never answered, so it never existed
		}
		var f Function
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out[f.Config.FunctionName] = &f
	}
	return out, nil
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
