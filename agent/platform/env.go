package platform

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// A function's environment as Lambda gives it to an OS-only (provided.*) runtime, from the
// Lambda developer guide's "Defined runtime environment variables" and the values of
// aws-lambda-runtime-interface-emulator's env package for zip packages.

// Where the sandbox puts the package and the runtime directory (sandboxinit.go).
const (
	sandboxTaskRoot   = "/var/task"
	sandboxRuntimeDir = "/var/runtime"
)

// The execution role's credentials. Lambda sets temporary credentials of the function's role;
// locally there is no IAM, so every function gets the made-up keys of faascope's local storage
// stand-ins (src/faascope/standins: DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY, which
// tests/standins/test_keys.py holds equal to these), with which it reaches them as a Lambda
// function reaches S3 with its role. The secret is not made from the key id, as a role's is
// not (AWS's recorded environment: test_introspection_invoke). No AWS_SESSION_TOKEN: the S3
// stand-in (VersityGW) refuses any session token with its root keys.
const (
	FunctionAccessKeyID     = "faascope"
	FunctionSecretAccessKey = "LocalStandInSecretKey/NotAnAWSKey/000000"
)

// reservedEnvVars are the keys a function's configuration may not set, as Lambda lists them
// ("Reserved environment variables"). TZ, LANG, PATH, LD_LIBRARY_PATH and AWS_LAMBDA_EXEC_WRAPPER
// are not among them: a function may set those (for provided.* runtimes Lambda ignores
// AWS_LAMBDA_EXEC_WRAPPER: "Wrapper scripts are not supported on OS-only runtimes").
var reservedEnvVars = map[string]bool{
	"_HANDLER": true, "_X_AMZN_TRACE_ID": true, "AWS_DEFAULT_REGION": true, "AWS_REGION": true,
	"AWS_EXECUTION_ENV": true, "AWS_LAMBDA_FUNCTION_NAME": true, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": true,
	"AWS_LAMBDA_FUNCTION_VERSION": true, "AWS_LAMBDA_INITIALIZATION_TYPE": true,
	"AWS_LAMBDA_LOG_GROUP_NAME": true, "AWS_LAMBDA_LOG_STREAM_NAME": true, "AWS_ACCESS_KEY": true,
	"AWS_ACCESS_KEY_ID": true, "AWS_SECRET_ACCESS_KEY": true, "AWS_SESSION_TOKEN": true,
	"AWS_LAMBDA_RUNTIME_API": true, "LAMBDA_TASK_ROOT": true, "LAMBDA_RUNTIME_DIR": true,
}

// maxEnvironmentBytes is Lambda's limit on a function's variables, measured as their JSON
// object ("This includes key names, values, quotes, commas, and brackets").
const maxEnvironmentBytes = 4096

// checkEnvironment refuses what Lambda refuses, with Lambda's messages.
// order is the keys' order in the request, when known.
func checkEnvironment(vars map[string]string, order []string) error {
	var reserved []string
	for k := range vars {
		if reservedEnvVars[k] {
			reserved = append(reserved, k)
		}
	}
	if len(reserved) > 0 {
		sort.Strings(reserved)
		return errInvalid("%s", "Lambda was unable to configure your environment variables because the environment "+
			"variables you have provided contains reserved keys that are currently not supported for "+
			"modification. Reserved keys used in this request: "+strings.Join(reserved, ", "))
	}
	measured := measuredEnvironment(vars, order)
	if len(measured) > maxEnvironmentBytes {
		return errInvalid("Lambda was unable to configure your environment variables because the environment "+
			"variables you have provided exceeded the 4KB limit. String measured: %s", measured)
	}
	return nil
}

// libraryPath is Lambda's LD_LIBRARY_PATH for a task root and runtime directory.
func libraryPath(taskRoot, runtimeDir string) string {
	return "/lib64:/usr/lib64:" + runtimeDir + ":" + runtimeDir + "/lib:" + taskRoot + ":" + taskRoot + "/lib:/opt/lib"
}

// runtimeDefaults are the unreserved variables Lambda sets; a function's own value replaces
// each. /opt is where layers go.
func runtimeDefaults() []string {
	return []string{
		"TZ=:UTC", "LANG=en_US.UTF-8", "PATH=/usr/local/bin:/usr/bin/:/bin:/opt/bin",
		"LD_LIBRARY_PATH=" + libraryPath(sandboxTaskRoot, sandboxRuntimeDir),
	}
}

// mergeEnv keeps one entry per name, the last one given, at the place of the first (a
// program's getenv would otherwise see whichever copy its libc finds first).
func mergeEnv(env []string) []string {
	pos := map[string]int{}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := pos[k]; ok {
			out[i] = kv
			continue
		}
		pos[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// getEnv is the value of name in env ("" when absent).
func getEnv(env []string, name string) string {
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == name {
			return v
		}
	}
	return ""
}

// measuredEnvironment is the variables' JSON object as Lambda measures and quotes it: in the
// request's order when order names every key (AWS keeps it), else by key.
func measuredEnvironment(vars map[string]string, order []string) []byte {
	keys := make([]string, 0, len(vars))
	seen := map[string]bool{}
	for _, k := range order {
		if _, ok := vars[k]; ok && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	if len(keys) != len(vars) {
		keys = keys[:0]
		for k := range vars {
			keys = append(keys, k)
		}
		sort.Strings(keys)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // measured as sent, not as Go would escape <, > and &
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		enc.Encode(k)
		buf.Truncate(buf.Len() - 1) // Encode's newline
		buf.WriteByte(':')
		enc.Encode(vars[k])
		buf.Truncate(buf.Len() - 1)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// UnmarshalJSON reads an Environment and the order of its variables.
func (e *Environment) UnmarshalJSON(b []byte) error {
	type plain Environment
	if err := json.Unmarshal(b, (*plain)(e)); err != nil {
		return err
	}
	e.order = nil
	var raw struct{ Variables json.RawMessage }
	if json.Unmarshal(b, &raw) != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw.Variables))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		k, err := dec.Token()
		var v json.RawMessage
		if err != nil || dec.Decode(&v) != nil {
			e.order = nil
			return nil
		}
		e.order = append(e.order, k.(string))
	}
	return nil
}
