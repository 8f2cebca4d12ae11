package platform

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// The parts of a FunctionConfiguration that AWS answers with on every operation that returns
// one (CreateFunction, GetFunction, GetFunctionConfiguration, Update*, PublishVersion,
// ListFunctions, ListVersionsByFunction), with AWS's defaults as LocalStack's test_lambda_api
// recorded them against AWS:
//
//	"LoggingConfig": {"LogFormat": "Text", "LogGroup": "/aws/lambda/NAME"},
//	"TracingConfig": {"Mode": "PassThrough"},
//	"SnapStart": {"ApplyOn": "None", "OptimizationStatus": "Off"},
//	"RuntimeVersionConfig": {"RuntimeVersionArn": "arn:aws:lambda:REGION::runtime:HASH"}
//
// The platform records LoggingConfig and TracingConfig as set (it writes no log group and
// traces nothing: its logs are GetFunction's own, logs.go); SnapStart's ApplyOn is kept as set, its
// OptimizationStatus is always Off (no snapshots are taken here).

// LoggingConfig is Lambda's LoggingConfig (API_LoggingConfig).
type LoggingConfig struct {
	LogFormat           string `json:"LogFormat,omitempty"`
	ApplicationLogLevel string `json:"ApplicationLogLevel,omitempty"`
	SystemLogLevel      string `json:"SystemLogLevel,omitempty"`
	LogGroup            string `json:"LogGroup,omitempty"`
}

// TracingConfig is Lambda's TracingConfig: Mode Active or PassThrough.
type TracingConfig struct {
	Mode string `json:"Mode"`
}

// SnapStart is SnapStartResponse: what the platform answers for every function.
type SnapStart struct {
	ApplyOn            string `json:"ApplyOn"`
	OptimizationStatus string `json:"OptimizationStatus"`
}

// RuntimeVersionConfig names the runtime version a function runs.
type RuntimeVersionConfig struct {
	RuntimeVersionArn string `json:"RuntimeVersionArn"`
}

type configShape struct {
	LoggingConfig        *LoggingConfig        `json:"LoggingConfig,omitempty"`
	TracingConfig        *TracingConfig        `json:"TracingConfig,omitempty"`
	SnapStart            *SnapStart            `json:"SnapStart,omitempty"`
	RuntimeVersionConfig *RuntimeVersionConfig `json:"RuntimeVersionConfig,omitempty"`
}

// ShapeInput is what a request may set of the shape (nil: as it is).
type ShapeInput struct {
	LoggingConfig *LoggingConfig
	TracingConfig *TracingConfig
	SnapStart     *SnapStart // ApplyOn only (checked by checkSnapStart)
}

// Log formats and the log level JSON implies when none is given (AWS: "INFO" for both levels,
// the recorded test_function_partial_advanced_logging_configuration_update).
const (
	logFormatText   = "Text"
	logFormatJSON   = "JSON"
	defaultLogLevel = "INFO"
)

var (
	logLevels    = []string{"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"}
	tracingModes = []string{"Active", "PassThrough"}
)

// applyShape checks and merges a request's LoggingConfig and TracingConfig into c, as AWS does:
// the fields given replace the ones set, the others stay; a JSON format without levels gets
// INFO for both, and a Text format has none (format_switch's recording: JSON → Text drops them).
func applyShape(c *FunctionConfiguration, in ShapeInput) error {
	fillShape(c)
	if l := in.LoggingConfig; l != nil {
		next := *c.LoggingConfig
		for _, f := range []struct {
			name, v string
			dst     *string
			allowed []string
		}{
			{"LogFormat", l.LogFormat, &next.LogFormat, []string{logFormatText, logFormatJSON}},
			{"ApplicationLogLevel", l.ApplicationLogLevel, &next.ApplicationLogLevel, logLevels},
			{"SystemLogLevel", l.SystemLogLevel, &next.SystemLogLevel, []string{"DEBUG", "INFO", "WARN"}},
		} {
			if f.v == "" {
				continue
			}
			if !oneOf(f.v, f.allowed) {
				return errValidationEnum("loggingConfig."+lowerFirst(f.name), f.v, f.allowed)
			}
			*f.dst = f.v
		}
		if l.LogGroup != "" {
			next.LogGroup = l.LogGroup
		}
		if next.LogFormat == logFormatText {
			next.ApplicationLogLevel, next.SystemLogLevel = "", ""
		} else {
			next.ApplicationLogLevel = orDefault(next.ApplicationLogLevel, defaultLogLevel)
			next.SystemLogLevel = orDefault(next.SystemLogLevel, defaultLogLevel)
		}
		c.LoggingConfig = &next
	}
	if t := in.TracingConfig; t != nil && t.Mode != "" {
		if !oneOf(t.Mode, tracingModes) {
			return errValidationEnum("tracingConfig.mode", t.Mode, tracingModes)
		}
		c.TracingConfig = &TracingConfig{Mode: t.Mode}
	}
	if sn := in.SnapStart; sn != nil && sn.ApplyOn != "" {
		// kept and answered as set (test_snapstart_update_function_configuration's recorded
		// answer: ApplyOn PublishedVersions, OptimizationStatus Off for $LATEST); the platform
		// takes no snapshots, so OptimizationStatus stays Off, published versions too
		c.SnapStart = &SnapStart{ApplyOn: sn.ApplyOn, OptimizationStatus: "Off"}
	}
	return nil
}

// fillShape gives a configuration AWS's defaults where it has none (a new function, or one
// stored before these fields) and the runtime version of its runtime.
func fillShape(c *FunctionConfiguration) {
	if c.LoggingConfig == nil {
		c.LoggingConfig = &LoggingConfig{LogFormat: logFormatText, LogGroup: "/aws/lambda/" + c.FunctionName}
	}
	if c.TracingConfig == nil {
		c.TracingConfig = &TracingConfig{Mode: "PassThrough"}
	}
	if c.SnapStart == nil {
		c.SnapStart = &SnapStart{ApplyOn: "None", OptimizationStatus: "Off"}
	}
	c.RuntimeVersionConfig = runtimeVersion(c.FunctionArn, c.Runtime)
}

// listed is a configuration as ListFunctions and ListVersionsByFunction show it: AWS leaves out
// the state, the last update's status and the runtime version there (every Functions[] and
// Versions[] item of test_lambda_api's recording), which GetFunction shows.
func listed(c FunctionConfiguration) FunctionConfiguration {
	c.State, c.LastUpdateStatus, c.statusReasons = "", "", statusReasons{}
	c.RuntimeVersionConfig = nil
	return c
}

// runtimeVersion is the runtime version ARN of a runtime in the function's region: one per
// runtime (the recording shows python3.12 and python3.11 with different ARNs, and the same ARN
// for every python3.12 function of a test). AWS's hash names a build of the runtime; here it is
// the SHA-256 of the runtime's name, stable across restarts. The recording has no function
// without a runtime (an image): it has none here.
func runtimeVersion(functionArn, runtime string) *RuntimeVersionConfig {
	if runtime == "" {
		return nil
	}
	region := defaultRegion
	if parts := strings.Split(functionArn, ":"); len(parts) > 3 && parts[3] != "" {
		region = parts[3]
	}
	sum := sha256.Sum256([]byte("faascope-runtime:" + runtime))
	return &RuntimeVersionConfig{RuntimeVersionArn: "arn:aws:lambda:" + region + "::runtime:" + hex.EncodeToString(sum[:])}
}

// errValidationEnum is AWS's answer to a value outside a field's enum.
func errValidationEnum(field, v string, allowed []string) error {
	return errValidation(v, field, "Member must satisfy enum value set: ["+strings.Join(allowed, ", ")+"]")
}

func oneOf(v string, allowed []string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }
