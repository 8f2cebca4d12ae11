package platform

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
)

func (tp *testPlatform) publishLayer(name string, zip []byte, extra map[string]any) LayerVersionOut {
	tp.t.Helper()
	req := map[string]any{"Content": map[string]string{"ZipFile": b64(zip)}}
	for k, v := range extra {
		req[k] = v
	}
	resp, body := tp.call("POST", "/2018-10-31/layers/"+name+"/versions", req, nil)
	if resp.StatusCode != 201 {
		tp.t.Fatalf("publish %s: %d %s", name, resp.StatusCode, body)
	}
	var out LayerVersionOut
	json.Unmarshal(body, &out)
	return out
}

func TestLayersAPI(t *testing.T) {
	tp := startPlatform(t, Config{})
	data := zipOf(nil, map[string][]byte{"lib/x.txt": []byte("x")})
	v1 := tp.publishLayer("lib", data, map[string]any{"Description": "first", "CompatibleRuntimes": []string{"provided.al2023"},
		"CompatibleArchitectures": []string{"x86_64"}, "LicenseInfo": "MIT"})
	if v1.Version != 1 || v1.LayerVersionArn != "arn:aws:lambda:us-east-1:000000000000:layer:lib:1" ||
		v1.LayerArn != "arn:aws:lambda:us-east-1:000000000000:layer:lib" || v1.Content.CodeSize != int64(len(data)) ||
		v1.Description != "first" || v1.CreatedDate == "" || v1.Content.CodeSha256 == "" {
		t.Fatalf("publish: %+v", v1)
	}
	v2 := tp.publishLayer("lib", data, map[string]any{"CompatibleRuntimes": []string{"provided.al2"}})
	if v2.Version != 2 {
		t.Fatalf("second version: %+v", v2)
	}
	resp, body := tp.call("GET", "/2018-10-31/layers/lib/versions/1", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"Description":"first"`) {
		t.Fatalf("get: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.call("GET", "/2018-10-31/layers/"+url.PathEscape(v1.LayerArn)+"/versions/1", nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("get by layer ARN as name: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.call("GET", "/2018-10-31/layers?find=LayerVersion&Arn="+url.QueryEscape(v2.LayerVersionArn), nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"Version":2`) {
		t.Fatalf("GetLayerVersionByArn: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.call("GET", "/2018-10-31/layers/lib/versions", nil, nil)
	var versions struct{ LayerVersions []LayerVersionsListItem }
	json.Unmarshal(body, &versions)
	if len(versions.LayerVersions) != 2 || versions.LayerVersions[0].Version != 2 {
		t.Fatalf("ListLayerVersions, newest first: %s", body)
	}
	resp, body = tp.call("GET", "/2018-10-31/layers/lib/versions?CompatibleRuntime=provided.al2023", nil, nil)
	json.Unmarshal(body, &versions)
	if len(versions.LayerVersions) != 1 || versions.LayerVersions[0].Version != 1 {
		t.Fatalf("ListLayerVersions filtered: %s", body)
	}
	tp.publishLayer("another", data, nil)
	resp, body = tp.call("GET", "/2018-10-31/layers?MaxItems=1", nil, nil)
	var layers struct {
		Layers     []LayersListItem
		NextMarker string
	}
	json.Unmarshal(body, &layers)
	if len(layers.Layers) != 1 || layers.Layers[0].LayerName != "another" || layers.NextMarker != "lib" {
		t.Fatalf("ListLayers page 1: %s", body)
	}
	resp, body = tp.call("GET", "/2018-10-31/layers?Marker=lib", nil, nil)
	layers.NextMarker = ""
	json.Unmarshal(body, &layers)
	if len(layers.Layers) != 1 || layers.Layers[0].LatestMatchingVersion.Version != 2 || layers.NextMarker != "" {
		t.Fatalf("ListLayers page 2: %s", body)
	}

	resp, body = tp.call("DELETE", "/2018-10-31/layers/lib/versions/1", nil, nil)
	if resp.StatusCode != 204 {
		t.Fatalf("delete: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.call("GET", "/2018-10-31/layers/lib/versions/1", nil, nil)
	wantAPIError(t, "deleted version", resp, body, 404, "ResourceNotFoundException", "The resource you requested does not exist.")
	if resp, body = tp.call("DELETE", "/2018-10-31/layers/lib/versions/1", nil, nil); resp.StatusCode != 204 {
		t.Fatalf("deleting again is no error, as on AWS: %d %s", resp.StatusCode, body)
	}
	if v3 := tp.publishLayer("lib", data, nil); v3.Version != 3 {
		t.Fatalf("version numbers are never reused: %+v", v3)
	}
	resp, body = tp.call("GET", "/2018-10-31/layers/none/versions", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"LayerVersions":[]`) {
		t.Fatalf("versions of a layer that does not exist: %d %s", resp.StatusCode, body)
	}

	resp, body = tp.call("POST", "/2018-10-31/layers/bad.name/versions", map[string]any{"Content": map[string]string{"ZipFile": b64(data)}}, nil)
	wantAPIError(t, "bad name", resp, body, 400, "ValidationException", "layerName")
	resp, body = tp.call("POST", "/2018-10-31/layers/empty/versions", map[string]any{"Content": map[string]string{}}, nil)
	wantAPIError(t, "no content", resp, body, 400, "InvalidParameterValueException", "Content")
	resp, body = tp.call("POST", "/2018-10-31/layers/notzip/versions", map[string]any{"Content": map[string]string{"ZipFile": b64([]byte("not a zip"))}}, nil)
	wantAPIError(t, "not a zip", resp, body, 400, "InvalidParameterValueException", "Could not unzip uploaded file")
	resp, body = tp.call("GET", "/2018-10-31/layers/lib/versions/x", nil, nil)
	wantAPIError(t, "bad version", resp, body, 400, "ValidationException", "versionNumber")

	// A restarted platform knows its layers (and does not reuse numbers).
	p2, err := New(Config{DataDir: tp.cfg.DataDir, DefaultProfile: ProfileLambda, Isolation: "none"})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if _, err := p2.GetLayerVersion(defaultRegion, "lib", 3); err != nil {
		t.Fatal(err)
	}
	if _, err := p2.GetLayerVersion(defaultRegion, "lib", 1); err == nil {
		t.Fatal("a deleted version stays deleted after a restart")
	}
}

func TestFunctionLayersValidation(t *testing.T) {
	tp := startPlatform(t, Config{})
	small := zipOf(nil, map[string][]byte{"f": []byte("x")})
	var arns []string
	for i := 0; i < 6; i++ {
		arns = append(arns, tp.publishLayer(fmt.Sprint("l", i), small, nil).LayerVersionArn)
	}
	create := func(layers []string) (*http.Response, []byte) {
		return tp.call("POST", "/2015-03-31/functions", map[string]any{"FunctionName": "withlayers", "Runtime": "provided.al2023",
			"Role": "arn:aws:iam::000000000000:role/r", "Handler": "h", "Code": map[string]string{"ZipFile": b64(agentZip)}, "Layers": layers}, nil)
	}
	resp, body := create(arns)
	wantAPIError(t, "6 layers", resp, body, 400, "InvalidParameterValueException", "Cannot reference more than 5 layers.")
	missing := "arn:aws:lambda:us-east-1:000000000000:layer:l0:9"
	resp, body = create([]string{missing})
	wantAPIError(t, "unknown version", resp, body, 400, "InvalidParameterValueException", "Layer version "+missing+" does not exist.")
	resp, body = create([]string{"l0:1"})
	wantAPIError(t, "not an ARN", resp, body, 400, "ValidationException", "at 'layers' failed to satisfy constraint")
	v2 := tp.publishLayer("l0", small, nil).LayerVersionArn
	resp, body = create([]string{arns[0], v2})
	wantAPIError(t, "two versions of one layer", resp, body, 400, "InvalidParameterValueException",
		"Two different versions of the same layer are not allowed to be referenced in the same function.")
	resp, body = create(arns[:5])
	if resp.StatusCode != 201 || !strings.Contains(string(body), `"Layers":[{"Arn":"`+arns[0]+`","CodeSize":`) {
		t.Fatalf("5 layers: %d %s", resp.StatusCode, body)
	}
	// Unzipped, the function and its layers together stay within 250 MB.
	big := func(mb int) []byte {
		var buf bytes.Buffer
		z := zip.NewWriter(&buf)
		w, _ := z.Create("zeros")
		w.Write(make([]byte, mb<<20))
		z.Close()
		return buf.Bytes()
	}
	b1 := tp.publishLayer("big1", big(120), nil).LayerVersionArn
	b2 := tp.publishLayer("big2", big(120), nil).LayerVersionArn
	resp, body = tp.call("PUT", "/2015-03-31/functions/withlayers/configuration", map[string]any{"Layers": []string{b1, b2}}, nil)
	wantAPIError(t, "over 250 MB together", resp, body, 400, "InvalidParameterValueException",
		"Function code combined with layers exceeds the maximum allowed size of 262144000 bytes. The actual size is")
	resp, body = tp.call("PUT", "/2015-03-31/functions/withlayers/configuration", map[string]any{"Layers": []string{b1}}, nil)
	if resp.StatusCode != 200 || strings.Count(string(body), `"Arn"`) != 1 {
		t.Fatalf("one big layer fits: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.call("PUT", "/2015-03-31/functions/withlayers/configuration", map[string]any{"Layers": []string{}}, nil)
	if resp.StatusCode != 200 || strings.Contains(string(body), `"Layers"`) {
		t.Fatalf("[] removes the layers: %d %s", resp.StatusCode, body)
	}
}

// Layers are unpacked in the function's order into /opt (a later layer's file wins), read-only;
// a custom runtime may come from a layer; a deleted version keeps serving the functions using it.
func TestLayersMountedInOrderAtOpt(t *testing.T) {
	tp := startPlatform(t, Config{})
	runtimeLayer := zipOf(map[string]string{"bootstrap": testRuntimeFile(t)},
		map[string][]byte{"data/a": []byte("A"), "data/common": []byte("from A")})
	dataLayer := zipOf(nil, map[string][]byte{"data/b": []byte("B"), "data/common": []byte("from B")})
	a := tp.publishLayer("runtime", runtimeLayer, nil).LayerVersionArn
	b := tp.publishLayer("data", dataLayer, nil).LayerVersionArn
	code := zipOf(nil, map[string][]byte{"handler.txt": []byte("no bootstrap here")})
	tp.create("layered", map[string]any{"Code": map[string]string{"ZipFile": b64(code)}, "Layers": []string{a, b}})
	read := map[string]any{"read": []string{"/opt/data/a", "/opt/data/b", "/opt/data/common", "/var/task/handler.txt"}}
	_, r, body := tp.invokeRuntime("layered", read)
	if r.Files["/opt/data/a"] != "A" || r.Files["/opt/data/b"] != "B" || r.Files["/opt/data/common"] != "from B" ||
		(isolation() == "namespaces" && r.Bootstrap != "/opt/bootstrap") {
		t.Fatalf("layers [runtime, data]: %s", body)
	}
	if resp, body := tp.call("PUT", "/2015-03-31/functions/layered/configuration", map[string]any{"Layers": []string{b, a}}, nil); resp.StatusCode != 200 {
		t.Fatalf("reorder: %d %s", resp.StatusCode, body)
	}
	if _, r, body = tp.invokeRuntime("layered", read); r.Files["/opt/data/common"] != "from A" {
		t.Fatalf("layers [data, runtime]: the later layer's file wins: %s", body)
	}

	// Deleted, the runtime layer still serves this function (new instances included), can stay
	// in its configuration, but no other function may take it up.
	tp.call("DELETE", "/2018-10-31/layers/runtime/versions/1", nil, nil)
	if resp, body := tp.call("PUT", "/2015-03-31/functions/layered/configuration", map[string]any{"Layers": []string{b, a}, "MemorySize": 256}, nil); resp.StatusCode != 200 {
		t.Fatalf("keeping a deleted layer version: %d %s", resp.StatusCode, body)
	}
	if _, r, body = tp.invokeRuntime("layered", read); r.Files["/opt/data/a"] != "A" {
		t.Fatalf("a deleted layer version keeps serving its function: %s", body)
	}
	resp, body := tp.call("POST", "/2015-03-31/functions", map[string]any{"FunctionName": "late", "Runtime": "provided.al2023",
		"Role": "arn:aws:iam::000000000000:role/r", "Handler": "h", "Code": map[string]string{"ZipFile": b64(code)}, "Layers": []string{a}}, nil)
	wantAPIError(t, "a deleted version for a new function", resp, body, 400, "InvalidParameterValueException", "does not exist")
	zipPath := tp.layerStore().zipPath("runtime", 1)
	if _, err := os.Stat(zipPath); err != nil {
		t.Fatalf("the deleted version's zip is kept while used: %v", err)
	}
	tp.DeleteFunction(ref("layered"))
	if _, err := os.Stat(zipPath); !os.IsNotExist(err) {
		t.Fatalf("the deleted version's zip goes with its last user: %v", err)
	}
}

// Under namespaces /opt exists, empty, for a function without layers.
func TestEmptyOptWithoutLayers(t *testing.T) {
	needSandboxes(t)
	tp := startPlatform(t, Config{})
	zip := zipOf(map[string]string{"bootstrap": testRuntimeFile(t)}, nil)
	tp.create("nolayers", map[string]any{"Code": map[string]string{"ZipFile": b64(zip)}})
	_, r, body := tp.invokeRuntime("nolayers", map[string]any{"read": []string{"/opt", "/opt/x"}})
	if !strings.Contains(r.Files["/opt"], "is a directory") || !strings.Contains(r.Files["/opt/x"], "no such file") {
		t.Fatalf("an empty /opt: %s", body)
	}
}

// TestLayersArePerRegion: a layer published through a region is that region's (its ARN names
// it, the other region neither lists nor gets it), it survives a restart there, and a function
// may use only its own region's layers: another region's, existing or not, is refused with
// AWS's answer before any other check (test_layer_function_exceptions' recording: the function's
// name already existed, and AWS answered the region, not the conflict).
func TestLayersArePerRegion(t *testing.T) {
	tp := startPlatform(t, Config{})
	data := zipOf(nil, map[string][]byte{"lib/x.txt": []byte("x")})
	east := tp.publishLayer("lib", data, nil)
	req := map[string]any{"Content": map[string]string{"ZipFile": b64(data)}}
	resp, body := tp.call("POST", "/2018-10-31/layers/lib/versions", req, signedFor("ap-southeast-1"))
	if resp.StatusCode != 201 {
		t.Fatalf("publish in ap-southeast-1: %d %s", resp.StatusCode, body)
	}
	other := decode[LayerVersionOut](t, body)
	if other.LayerVersionArn != "arn:aws:lambda:ap-southeast-1:000000000000:layer:lib:1" || east.Version != 1 {
		t.Fatalf("each region numbers its own layer's versions: %s and %s", east.LayerVersionArn, other.LayerVersionArn)
	}
	resp, body = tp.call("GET", "/2018-10-31/layers", nil, nil)
	if strings.Contains(string(body), "ap-southeast-1") || !strings.Contains(string(body), east.LayerArn) {
		t.Fatalf("us-east-1's ListLayers: %s", body)
	}
	resp, body = tp.call("GET", "/2018-10-31/layers/lib/versions", nil, signedFor("ap-southeast-1"))
	if !strings.Contains(string(body), other.LayerVersionArn) || strings.Contains(string(body), east.LayerVersionArn) {
		t.Fatalf("ap-southeast-1's ListLayerVersions: %s", body)
	}
	resp, body = tp.call("GET", "/2018-10-31/layers?find=LayerVersion&Arn="+url.QueryEscape(other.LayerVersionArn), nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), other.LayerVersionArn) {
		t.Fatalf("GetLayerVersionByArn of the other region's: %d %s", resp.StatusCode, body)
	}
	tp.create("fn", map[string]any{"Layers": []string{east.LayerVersionArn}})
	wrongRegion := "Layers are not in the same region as the function. Layers are expected to be in region us-east-1."
	for what, extra := range map[string]map[string]any{
		"create, the name taken":      {"Layers": []string{other.LayerVersionArn}},
		"create, a version not there": {"Layers": []string{"arn:aws:lambda:eu-west-1:000000000000:layer:lib:9"}},
	} {
		req := map[string]any{"FunctionName": "fn", "Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/x",
			"Handler": "bootstrap", "Code": map[string]string{"ZipFile": b64(agentZip)}}
		for k, v := range extra {
			req[k] = v
		}
		resp, body = tp.call("POST", "/2015-03-31/functions", req, nil)
		wantAPIError(t, what, resp, body, 400, "InvalidParameterValueException", wrongRegion)
	}
	resp, body = tp.call("PUT", fnPath+"fn/configuration", map[string]any{"Layers": []string{other.LayerVersionArn}}, nil)
	wantAPIError(t, "update", resp, body, 400, "InvalidParameterValueException", wrongRegion)
	tp.Close()
	p2, err := New(Config{DataDir: tp.cfg.DataDir, DefaultProfile: ProfileLambda, Isolation: "none"})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if _, err := p2.GetLayerVersion("ap-southeast-1", "lib", 1); err != nil {
		t.Fatalf("ap-southeast-1's layer after a restart: %v", err)
	}
	if got, err := p2.GetLayerVersion(defaultRegion, "lib", 1); err != nil || got.LayerVersionArn != east.LayerVersionArn {
		t.Fatalf("us-east-1's layer after a restart: %+v %v", got, err)
	}
}
