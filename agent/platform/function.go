package platform

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"time"
)

// FunctionConfiguration is Lambda's FunctionConfiguration shape, as boto3 and the AWS CLI read it.
type FunctionConfiguration struct {
	FunctionName     string           `json:"FunctionName"`
	FunctionArn      string           `json:"FunctionArn"`
	Runtime          string           `json:"Runtime"`
	Role             string           `json:"Role"`
	Handler          string           `json:"Handler"`
	CodeSize         int64            `json:"CodeSize"`
	CodeSha256       string           `json:"CodeSha256"`
	Description      string           `json:"Description"`
	Timeout          int              `json:"Timeout"`
	MemorySize       int              `json:"MemorySize"`
	LastModified     string           `json:"LastModified"`
	Version          string           `json:"Version"`
	Environment      *Environment     `json:"Environment,omitempty"`
	State            string           `json:"State,omitempty"` // "" only in lists (configshape.go: listed)
	LastUpdateStatus string           `json:"LastUpdateStatus,omitempty"`
	PackageType      string           `json:"PackageType"`
	Architectures    []string         `json:"Architectures"`
	EphemeralStorage EphemeralStorage `json:"EphemeralStorage"`
	RevisionId       string           `json:"RevisionId"`
	Layers           []LayerRef       `json:"Layers,omitempty"` // in mount order (layers.go)
	// What AWS answers beside them, with AWS's defaults (configshape.go).
	configShape
	// State and LastUpdateStatus follow Lambda's lifecycle (lifecycle.go): Pending → Active
	// after a create, InProgress → Successful after an update; these say why.
	statusReasons
}

// LayerRef is a layer version a function uses, as FunctionConfiguration.Layers shows it.
type LayerRef struct {
	Arn      string `json:"Arn"`
	CodeSize int64  `json:"CodeSize"`
}

type statusReasons struct {
	StateReason                string `json:"StateReason,omitempty"`
	StateReasonCode            string `json:"StateReasonCode,omitempty"`
	LastUpdateStatusReason     string `json:"LastUpdateStatusReason,omitempty"`
	LastUpdateStatusReasonCode string `json:"LastUpdateStatusReasonCode,omitempty"`
}

type Environment struct {
	Variables map[string]string `json:"Variables"`
	// order is the variables' order in the request (env.go): AWS's 4 KB message quotes them so.
	order []string
}

type EphemeralStorage struct {
	Size int `json:"Size"`
}

// Function is a deployed function: its configuration ($LATEST), tags, package on disk, and its
// published versions and aliases (versions.go).
type Function struct {
	Config     FunctionConfiguration `json:"config"`
	Tags       map[string]string     `json:"tags"`
	Generation int                   `json:"generation"` // bumps on every update; older instances retire
	// ReservedConcurrency is PutFunctionConcurrency's value; nil = the function draws on the
	// unreserved pool (concurrency.go).
	ReservedConcurrency *int `json:"reserved_concurrency,omitempty"`
	// Region is where the function was created; "" (data written before regions) is us-east-1.
	Region      string              `json:"region,omitempty"`
	Versions    []*publishedVersion `json:"versions,omitempty"`     // ascending; never modified once published
	LastVersion int                 `json:"last_version,omitempty"` // numbers are never reused, as on Lambda
	Aliases     map[string]*Alias   `json:"aliases,omitempty"`
	// Qualified holds what Lambda keeps per $LATEST, version or alias: resource-based policy,
	// function URL, event invoke and provisioned concurrency configs (qualified.go).
	Qualified map[string]*qualifiedState `json:"qualified,omitempty"`
	// RecursiveLoop is PutFunctionRecursionConfig's value; "" is Lambda's default, Terminate.
	RecursiveLoop string `json:"recursive_loop,omitempty"`
	// CodeSigningConfigArn is PutFunctionCodeSigningConfig's config (codesigning.go).
	CodeSigningConfigArn string `json:"code_signing_config_arn,omitempty"`
}

// key is the function's identity in the platform's tables.
func (f *Function) key() fnKey {
	if f.Region == "" {
		return fnKey{defaultRegion, f.Config.FunctionName}
	}
	return fnKey{f.Region, f.Config.FunctionName}
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

// lambdaTime is the timestamp format of LastModified.
func lambdaTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000-0700") }

func newRevision() string {
	b := make([]byte, 16)
	rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// codeSha256 is CodeSha256 as Lambda shows it: the package's SHA-256, base64-encoded.
func codeSha256(sum []byte) string { return base64.StdEncoding.EncodeToString(sum) }
