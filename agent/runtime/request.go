// Package runtime is the agent's side of the FaaS protocols: the Lambda Runtime API loop, the
// HTTP server for Cloud Run-style platforms, request decoding, and the response with the
// instance's identity.
package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"reflect"
	"sort"
	"strings"

	"github.com/faascope/faascope/agent/workloads"
)

// DecodeRequest parses an invocation payload, {"workload": {"kind": ..., parameters}}, and
// validates it. Every failure is an *workloads.Error of type InvalidRequest whose message
// starts with the offending field, because users write these payloads by hand or generate
// them from experiment specs, and "which field?" is the first question. It is stricter than
// encoding/json on purpose (exact-case field names, no nulls), so that whatever it accepts also
// validates against agent-request.schema.json.
func DecodeRequest(payload []byte) (workloads.Workload, string, error) {
	top, err := object(payload, "request")
	if err != nil {
		return nil, "", err
	}
	for _, k := range sortedKeys(top) {
		if k != "workload" {
			return nil, "", workloads.Invalid(k, "unknown field (the request has only \"workload\")")
		}
	}
	raw, ok := top["workload"]
	if !ok {
		return nil, "", workloads.Invalid("workload", "required")
	}
	fields, err := object(raw, "workload")
	if err != nil {
		return nil, "", err
	}
	rawKind, ok := fields["kind"]
	if !ok {
		return nil, "", workloads.Invalid("workload.kind", "required (one of %q)", workloads.Kinds())
	}
	var kind string
	if isNull(rawKind) || json.Unmarshal(rawKind, &kind) != nil {
		return nil, "", workloads.Invalid("workload.kind", "must be a string (one of %q)", workloads.Kinds())
	}
	w, ok := workloads.New(kind)
	if !ok {
		return nil, kind, workloads.Invalid("workload.kind", "unknown kind %q (one of %q)", kind, workloads.Kinds())
	}
	known := jsonFields(w)
	for _, k := range sortedKeys(fields) {
		if !known[k] {
			return nil, kind, workloads.Invalid("workload."+k, "unknown field for kind %q", kind)
		}
		switch string(bytes.TrimSpace(fields[k])) {
		case "null":
			return nil, kind, workloads.Invalid("workload."+k, "must not be null (omit it for the default)")
		case `""`:
			return nil, kind, workloads.Invalid("workload."+k, "must not be empty (omit it for the default)")
		}
		fields[k] = integral(fields[k])
	}
	normalised, err := json.Marshal(fields)
	if err != nil {
		return nil, kind, &workloads.Error{Type: workloads.Internal, Message: err.Error()}
	}
	dec := json.NewDecoder(bytes.NewReader(normalised))
	dec.DisallowUnknownFields()
	if err := dec.Decode(w); err != nil {
		return nil, kind, decodeError(err)
	}
	if err := w.Validate(); err != nil {
		return nil, kind, err
	}
	return w, kind, nil
}

// object decodes exactly one JSON object and nothing after it.
func object(b []byte, field string) (map[string]json.RawMessage, error) {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return nil, workloads.Invalid(field, "empty; expected a JSON object")
	}
	if trimmed[0] != '{' {
		return nil, workloads.Invalid(field, "must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	var m map[string]json.RawMessage
	if err := dec.Decode(&m); err != nil {
		return nil, workloads.Invalid(field, "malformed JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, workloads.Invalid(field, "malformed JSON: data after the object")
	}
	return m, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// integral rewrites numbers such as 1.0 or 4e3 as integers. JSON Schema counts them as
// integers, encoding/json would not; agreeing with the schema matters more than the spelling.
// Long or extreme literals are left alone (they then fail as non-integers) so that a request
// like 1e999999999 cannot make big.Rat allocate without bound.
func integral(raw json.RawMessage) json.RawMessage {
	s := string(bytes.TrimSpace(raw))
	if len(s) == 0 || len(s) > 64 || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) || !strings.ContainsAny(s, ".eE") {
		return raw
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		exp := strings.TrimLeft(s[i+1:], "+-")
		if len(exp) > 3 {
			return raw
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || !r.IsInt() {
		return raw
	}
	return json.RawMessage(r.Num().String())
}

// jsonFields lists the exact JSON names a parameter struct accepts.
func jsonFields(w workloads.Workload) map[string]bool {
	names := map[string]bool{}
	for name := range jsonFieldTypes(reflect.TypeOf(w).Elem()) {
		names[name] = true
	}
	return names
}

// RequestFields is the decoder's side of the request contract: for each workload kind, the JSON
// field names it accepts and the JSON Schema type each decodes from ("integer", "number",
// "string", "boolean"). The agreement test compares it with agent-request.schema.json, the one
// source of the contract, so a kind or field added on one side only fails the build.
func RequestFields() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, kind := range workloads.Kinds() {
		w, _ := workloads.New(kind)
		types := map[string]string{}
		for name, t := range jsonFieldTypes(reflect.TypeOf(w).Elem()) {
			types[name] = schemaType(t)
		}
		out[kind] = types
	}
	return out
}

// jsonFieldTypes collects a struct's JSON names and Go types the way encoding/json sees them:
// the fields of an untagged embedded struct are promoted to the top level, where a field of the
// outer struct with the same name wins.
func jsonFieldTypes(t reflect.Type) map[string]reflect.Type {
	names := map[string]reflect.Type{}
	var promoted []map[string]reflect.Type
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			promoted = append(promoted, jsonFieldTypes(f.Type))
			continue
		}
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		names[name] = f.Type
	}
	for _, inner := range promoted {
		for n, ft := range inner {
			if _, ok := names[n]; !ok {
				names[n] = ft
			}
		}
	}
	return names
}

// schemaType names the JSON Schema type a Go field decodes from (pointers mark optional fields,
// they decode from the same type).
func schemaType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	}
	return t.Kind().String()
}

func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return workloads.Invalid("workload."+te.Field, "must be %s (got %s)", typeName(te.Type), te.Value)
	}
	return workloads.Invalid("workload", "%v", err)
}

func typeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	}
	return fmt.Sprintf("a %s", t.Kind())
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
