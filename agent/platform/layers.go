package platform

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Layers: PublishLayerVersion, GetLayerVersion(ByArn), ListLayers, ListLayerVersions,
// DeleteLayerVersion, and a function's Layers. A function's layers are extracted at its cold
// start, in the order the function lists them, into one directory (a later layer's file
// replaces an earlier one's), which the sandbox mounts read-only at /opt, as Lambda does.
//
// Layers are per region, as functions are: a layer published through one region is that
// region's (its ARN names it), and a function may use only its own region's layers (Lambda:
// "Layers are not in the same region as the function"). Inside the platform a layer is named by
// its key (layerKey): its name in us-east-1, NAME.REGION elsewhere (a layer name has no dot),
// as a function's directory is.
//
// A layer version is a zip and a JSON record under dataDir/layers/<key>/. Version numbers are
// never reused, so a deleted version keeps its record (marked deleted); its zip stays as long as
// a function uses it (Lambda: "functions that already use it can continue to use it") and is
// removed by collectLayers once none does. Changes happen under commitMu, as function changes.

// Lambda's layer limits: 5 layers per function; the function's package and its layers unzipped
// together at most maxUnzippedBytes (the same 250 MB quota).
const maxLayersPerFunction = 5

// layerVersion is one published layer version as the platform keeps it.
type layerVersion struct {
	Name                    string   `json:"name"`
	Version                 int64    `json:"version"`
	Description             string   `json:"description"`
	LicenseInfo             string   `json:"license_info"`
	CompatibleRuntimes      []string `json:"compatible_runtimes"`
	CompatibleArchitectures []string `json:"compatible_architectures"`
	CreatedDate             string   `json:"created_date"`
	CodeSize                int64    `json:"code_size"`
	CodeSha256              string   `json:"code_sha256"`
	UnzippedSize            int64    `json:"unzipped_size"`
	Deleted                 bool     `json:"deleted,omitempty"`
	// Policy is the version's resource-based policy (layerpolicy.go); nil = none.
	Policy *layerPolicy `json:"policy,omitempty"`
}

var (
	layerNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,140}$`)
	// layerArnRE is a layer's ARN (GetLayerVersion and the others accept it as the name).
	layerArnRE        = regexp.MustCompile(`^arn:aws[a-zA-Z-]*:lambda:[a-z0-9-]+:(\d{12}):layer:([a-zA-Z0-9_-]{1,140})$`)
	layerVersionArnRE = regexp.MustCompile(`^arn:aws[a-zA-Z-]*:lambda:[a-z0-9-]+:(\d{12}):layer:([a-zA-Z0-9_-]{1,140}):([0-9]+)$`)
)

// layerKey names a region's layer inside the platform (the map p.layers, the directory, the
// record's name), as a function's directory is named (regionalName).
func layerKey(region, name string) string { return regionalName(region, name) }

// splitLayerKey is layerKey's region and name (regionalName's inverse).
func splitLayerKey(key string) (region, name string) {
	if name, region, ok := strings.Cut(key, "."); ok {
		return region, name
	}
	return defaultRegion, key
}

// arnRegion is the region an ARN names (its fourth field).
func arnRegion(arn string) string {
	if f := strings.SplitN(arn, ":", 5); len(f) == 5 {
		return f[3]
	}
	return ""
}

// layerVersionKey is the key and version number of a layer version ARN (ok false: not one).
func layerVersionKey(arn string) (key string, v int64, ok bool) {
	m := layerVersionArnRE.FindStringSubmatch(arn)
	if m == nil {
		return "", 0, false
	}
	v, _ = strconv.ParseInt(m[3], 10, 64)
	return layerKey(arnRegion(arn), m[2]), v, true
}

func layerARN(key string) string {
	region, name := splitLayerKey(key)
	return "arn:aws:lambda:" + region + ":" + accountID + ":layer:" + name
}

func layerVersionARN(key string, v int64) string {
	return layerARN(key) + ":" + strconv.FormatInt(v, 10)
}

// layerStore keeps layer versions under dataDir/layers.
type layerStore struct{ dir string }

func (p *Platform) layerStore() layerStore {
	return layerStore{dir: filepath.Join(p.cfg.DataDir, "layers")}
}

func (s layerStore) zipPath(name string, v int64) string {
	return filepath.Join(s.dir, name, strconv.FormatInt(v, 10)+".zip")
}

func (s layerStore) recordPath(name string, v int64) string {
	return filepath.Join(s.dir, name, strconv.FormatInt(v, 10)+".json")
}

// commit writes a layer version's record, first moving its staged zip into place (code nil:
// only the record changes).
func (s layerStore) commit(lv *layerVersion, code *stagedCode) error {
	if err := os.MkdirAll(filepath.Join(s.dir, lv.Name), 0o700); err != nil {
		return err
	}
	if code != nil {
		if err := os.Rename(code.path, s.zipPath(lv.Name, lv.Version)); err != nil {
			return err
		}
		code.path = ""
	}
	b, _ := json.MarshalIndent(lv, "", " ")
	return writeAtomic(s.recordPath(lv.Name, lv.Version), b)
}

func (s layerStore) loadAll() (map[string]map[int64]*layerVersion, error) {
	out := map[string]map[int64]*layerVersion{}
	records, err := filepath.Glob(filepath.Join(s.dir, "*", "*.json"))
	if err != nil {
		return nil, err
	}
	for _, path := range records {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var lv layerVersion
		if err := json.Unmarshal(b, &lv); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if out[lv.Name] == nil {
			out[lv.Name] = map[int64]*layerVersion{}
		}
		out[lv.Name][lv.Version] = &lv
	}
	return out, nil
}

// PublishLayerInput is PublishLayerVersion's request, parsed.
type PublishLayerInput struct {
	Region                                      string // the request's
	Name, Description, LicenseInfo              string
	CompatibleRuntimes, CompatibleArchitectures []string
	Code                                        io.Reader // the zip, inline or from S3 (s3code.go)
}

// PublishLayerVersion checks and stores a new version of a layer (the first creates the layer).
func (p *Platform) PublishLayerVersion(in PublishLayerInput) (LayerVersionOut, error) {
	name, err := layerNameOf(in.Region, in.Name)
	if err != nil {
		return LayerVersionOut{}, err
	}
	if err := checkLayerCompatibility(in.CompatibleRuntimes, in.CompatibleArchitectures); err != nil {
		return LayerVersionOut{}, err
	}
	if len([]rune(in.Description)) > 256 {
		return LayerVersionOut{}, errInvalid("Description must have at most 256 characters")
	}
	if len([]rune(in.LicenseInfo)) > 512 {
		return LayerVersionOut{}, errInvalid("LicenseInfo must have at most 512 characters")
	}
	if len(in.CompatibleRuntimes) > 15 {
		return LayerVersionOut{}, errInvalid("CompatibleRuntimes: at most 15 runtimes")
	}
	if len(in.CompatibleArchitectures) > 2 {
		return LayerVersionOut{}, errInvalid("CompatibleArchitectures: at most 2 architectures")
	}
	staged, err := p.stage(in.Code)
	if err != nil {
		return LayerVersionOut{}, err
	}
	defer staged.discard()
	unzipped, err := unzippedSize(staged.path)
	if err != nil {
		return LayerVersionOut{}, err
	}
	lv := &layerVersion{Name: name, Description: in.Description, LicenseInfo: in.LicenseInfo,
		CompatibleRuntimes: in.CompatibleRuntimes, CompatibleArchitectures: in.CompatibleArchitectures,
		CreatedDate: lambdaTime(time.Now()), CodeSize: staged.size, CodeSha256: staged.sha256,
		UnzippedSize: unzipped}

	p.commitMu.Lock()
	defer p.commitMu.Unlock()
	if err := p.checkCodeStorage(staged.size, 0); err != nil {
		return LayerVersionOut{}, err
	}
	p.mu.Lock()
	for v := range p.layers[name] { // deleted versions count: numbers are never reused
		lv.Version = max(lv.Version, v)
	}
	p.mu.Unlock()
	lv.Version++
	if err := p.layerStore().commit(lv, staged); err != nil {
		return LayerVersionOut{}, err
	}
	p.mu.Lock()
	if p.layers[name] == nil {
		p.layers[name] = map[int64]*layerVersion{}
	}
	p.layers[name][lv.Version] = lv
	p.mu.Unlock()
	return p.layerOut(lv), nil
}

// layerNameOf is the key (layerKey) of a layer named by its name in the request's region or by
// its ARN (as Lambda's LayerName is).
func layerNameOf(region, s string) (string, error) {
	if m := layerArnRE.FindStringSubmatch(s); m != nil {
		return layerKey(arnRegion(s), m[2]), nil
	}
	if !layerNameRE.MatchString(s) {
		return "", &apiError{http.StatusBadRequest, "ValidationException",
			"1 validation error detected: Value '" + s + "' at 'layerName' failed to satisfy constraint: " +
				"Member must satisfy regular expression pattern: (arn:[a-zA-Z0-9-]+:lambda:[a-zA-Z0-9-]+:\\d{12}:layer:[a-zA-Z0-9-_]+)|[a-zA-Z0-9-_]+", ""}
	}
	return layerKey(region, s), nil
}

// errLayerNotFound is Lambda's answer for a layer version it does not have.
func errLayerNotFound() error {
	return &apiError{http.StatusNotFound, "ResourceNotFoundException", "The resource you requested does not exist.", ""}
}

// GetLayerVersion returns a layer version that exists (not deleted).
func (p *Platform) GetLayerVersion(region, layer string, version int64) (LayerVersionOut, error) {
	if err := checkLayerVersionNumber(version); err != nil {
		return LayerVersionOut{}, err
	}
	name, err := layerNameOf(region, layer)
	if err != nil {
		return LayerVersionOut{}, err
	}
	lv := p.liveLayerVersion(name, version)
	if lv == nil {
		return LayerVersionOut{}, errLayerNotFound()
	}
	return p.layerOut(lv), nil
}

// GetLayerVersionByArn is GetLayerVersion given the version's ARN.
func (p *Platform) GetLayerVersionByArn(arn string) (LayerVersionOut, error) {
	m := layerVersionArnRE.FindStringSubmatch(arn)
	if m == nil {
		return LayerVersionOut{}, errValidations(patternFault(arn, "arn", layerVersionArnPattern)) // validate.go
	}
	v, _ := strconv.ParseInt(m[3], 10, 64)
	if m[1] != accountID {
		return LayerVersionOut{}, errLayerNotFound()
	}
	return p.GetLayerVersion(arnRegion(arn), m[2], v)
}

// liveLayerVersion is a layer's version unless it does not exist or was deleted (nil then).
func (p *Platform) liveLayerVersion(name string, version int64) *layerVersion {
	p.mu.Lock()
	defer p.mu.Unlock()
	if lv := p.layers[name][version]; lv != nil && !lv.Deleted {
		return lv
	}
	return nil
}

// DeleteLayerVersion deletes a version; deleting one that does not exist is no error (as on
// Lambda). Functions using it keep it.
func (p *Platform) DeleteLayerVersion(region, layer string, version int64) error {
	if err := checkLayerVersionNumber(version); err != nil {
		return err
	}
	name, err := layerNameOf(region, layer)
	if err != nil {
		return err
	}
	p.commitMu.Lock()
	defer p.commitMu.Unlock()
	lv := p.liveLayerVersion(name, version)
	if lv == nil {
		return nil
	}
	next := *lv
	next.Deleted = true
	if err := p.layerStore().commit(&next, nil); err != nil {
		return err
	}
	p.mu.Lock()
	p.layers[name][version] = &next
	p.mu.Unlock()
	p.collectLayers()
	return nil
}

// collectLayers removes the zips of deleted layer versions no function uses any more. The
// caller holds commitMu (no function gains a layer meanwhile).
func (p *Platform) collectLayers() {
	p.mu.Lock()
	used := map[string]bool{}
	for _, f := range p.functions {
		for _, l := range f.Config.Layers {
			used[l.Arn] = true
		}
	}
	var gone []string
	for name, versions := range p.layers {
		for v, lv := range versions {
			if lv.Deleted && !used[layerVersionARN(name, v)] {
				gone = append(gone, p.layerStore().zipPath(name, v))
			}
		}
	}
	p.mu.Unlock()
	for _, path := range gone {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			log.Printf("remove deleted layer version %s: %v", path, err)
		}
	}
}

// LayerVersionOut is a layer version as Lambda shows it (GetLayerVersion, PublishLayerVersion).
type LayerVersionOut struct {
	Content struct {
		Location   string `json:"Location"`
		CodeSha256 string `json:"CodeSha256"`
		CodeSize   int64  `json:"CodeSize"`
	} `json:"Content"`
	LayerArn        string `json:"LayerArn"`
	LayerVersionArn string `json:"LayerVersionArn"`
	LayerVersionsListItem
}

// LayerVersionsListItem is a layer version in ListLayerVersions and ListLayers.
type LayerVersionsListItem struct {
	LayerVersionArn string `json:"LayerVersionArn"`
	Version         int64  `json:"Version"`
	Description     string `json:"Description"`
	CreatedDate     string `json:"CreatedDate"`
	// Pointers: a list given empty is answered empty ([]), one not given is left out, as AWS
	// answers (test_layer_exceptions' publish_empty_result).
	CompatibleRuntimes      *[]string `json:"CompatibleRuntimes,omitempty"`
	LicenseInfo             string    `json:"LicenseInfo,omitempty"`
	CompatibleArchitectures *[]string `json:"CompatibleArchitectures,omitempty"`
}

// givenList is a stored list as answered: nil when the request left it out (a JSON null).
func givenList(l []string) *[]string {
	if l == nil {
		return nil
	}
	return &l
}

func listItem(lv *layerVersion) LayerVersionsListItem {
	return LayerVersionsListItem{LayerVersionArn: layerVersionARN(lv.Name, lv.Version), Version: lv.Version,
		Description: lv.Description, CreatedDate: lv.CreatedDate, CompatibleRuntimes: givenList(lv.CompatibleRuntimes),
		LicenseInfo: lv.LicenseInfo, CompatibleArchitectures: givenList(lv.CompatibleArchitectures)}
}

func (p *Platform) layerOut(lv *layerVersion) LayerVersionOut {
	out := LayerVersionOut{LayerArn: layerARN(lv.Name), LayerVersionsListItem: listItem(lv)}
	out.LayerVersionArn = out.LayerVersionsListItem.LayerVersionArn
	// Lambda gives a presigned S3 URL; the platform's package is a local file (as GetFunction's).
	out.Content.Location = "file://" + p.layerStore().zipPath(lv.Name, lv.Version)
	out.Content.CodeSha256, out.Content.CodeSize = lv.CodeSha256, lv.CodeSize
	return out
}

// LayerFilter is ListLayers' and ListLayerVersions' optional filters.
type LayerFilter struct{ Runtime, Architecture string }

func (f LayerFilter) match(lv *layerVersion) bool {
	has := func(list []string, v string) bool {
		for _, x := range list {
			if x == v {
				return true
			}
		}
		return false
	}
	return !lv.Deleted && (f.Runtime == "" || has(lv.CompatibleRuntimes, f.Runtime)) &&
		(f.Architecture == "" || has(lv.CompatibleArchitectures, f.Architecture))
}

// ListLayerVersions lists a layer's versions, newest first, as Lambda does; a layer that does
// not exist has none (no error, as on Lambda). The marker is the version to start at.
func (p *Platform) ListLayerVersions(region, layer string, f LayerFilter, marker string, max int) ([]LayerVersionsListItem, string, error) {
	name, err := layerNameOf(region, layer)
	if err != nil {
		return nil, "", err
	}
	p.mu.Lock()
	var all []*layerVersion
	for _, lv := range p.layers[name] {
		if f.match(lv) {
			all = append(all, lv)
		}
	}
	p.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].Version > all[j].Version })
	start := 0
	if marker != "" {
		m, err := strconv.ParseInt(marker, 10, 64)
		if err != nil {
			return nil, "", errInvalid("Marker %q is not one this platform gave", marker)
		}
		for start < len(all) && all[start].Version > m {
			start++
		}
	}
	out := []LayerVersionsListItem{}
	next := ""
	for i := start; i < len(all); i++ {
		if len(out) == max {
			next = strconv.FormatInt(all[i].Version, 10)
			break
		}
		out = append(out, listItem(all[i]))
	}
	return out, next, nil
}

// LayersListItem is one layer in ListLayers, with its latest version that matches the filter.
type LayersListItem struct {
	LayerName             string                `json:"LayerName"`
	LayerArn              string                `json:"LayerArn"`
	LatestMatchingVersion LayerVersionsListItem `json:"LatestMatchingVersion"`
}

// ListLayers lists a region's layers in name order, each with its latest matching version; the
// marker is the name to start at.
func (p *Platform) ListLayers(region string, f LayerFilter, marker string, max int) ([]LayersListItem, string) {
	p.mu.Lock()
	var all []LayersListItem
	for key, versions := range p.layers {
		r, name := splitLayerKey(key)
		if r != region {
			continue
		}
		var latest *layerVersion
		for _, lv := range versions {
			if f.match(lv) && (latest == nil || lv.Version > latest.Version) {
				latest = lv
			}
		}
		if latest != nil {
			all = append(all, LayersListItem{LayerName: name, LayerArn: layerARN(key), LatestMatchingVersion: listItem(latest)})
		}
	}
	p.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].LayerName < all[j].LayerName })
	out := []LayersListItem{}
	next := ""
	for _, l := range all {
		if l.LayerName < marker {
			continue
		}
		if len(out) == max {
			next = l.LayerName
			break
		}
		out = append(out, l)
	}
	return out, next
}

// resolveLayers checks a function's Layers (version ARNs, in mount order) as Lambda does and
// describes them; a deleted version is accepted only if the function already uses it (keep).
// A layer of another region than the function's is refused first, even one that exists there
// (test_layer_function_exceptions' recording).
func (p *Platform) resolveLayers(region string, arns []string, keep []LayerRef) ([]LayerRef, error) {
	if len(arns) > maxLayersPerFunction {
		return nil, errInvalid("Cannot reference more than %d layers.", maxLayersPerFunction)
	}
	kept := map[string]bool{}
	for _, l := range keep {
		kept[l.Arn] = true
	}
	seen := map[string]string{} // layer → the version ARN that named it
	out := []LayerRef{}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, arn := range arns {
		m := layerVersionArnRE.FindStringSubmatch(arn)
		if m == nil {
			return nil, errValidation("["+arn+"]", "layers", layersConstraint) // validate.go
		}
		if arnRegion(arn) != region {
			return nil, errInvalid("Layers are not in the same region as the function. Layers are expected to be in region %s.", region)
		}
		name, v, _ := layerVersionKey(arn)
		canonical := layerVersionARN(name, v)
		lv := p.layers[name][v]
		if m[1] != accountID || lv == nil || (lv.Deleted && !kept[canonical]) {
			return nil, errInvalid("Layer version %s does not exist.", arn)
		}
		if first, dup := seen[name]; dup {
			return nil, errInvalid("Two different versions of the same layer are not allowed to be referenced in the same function. %s and %s are versions of the same layer.", first, arn)
		}
		seen[name] = arn
		out = append(out, LayerRef{Arn: canonical, CodeSize: lv.CodeSize})
	}
	return out, nil
}

// checkCombinedSize refuses a function whose package and layers unzip to more than Lambda's
// 250 MB, with Lambda's message.
func (p *Platform) checkCombinedSize(codeZip string, layers []LayerRef) error {
	if len(layers) == 0 {
		return nil // the package alone was checked at upload
	}
	total, err := unzippedSize(codeZip)
	if err != nil {
		return err
	}
	p.mu.Lock()
	for _, l := range layers {
		key, v, _ := layerVersionKey(l.Arn)
		if lv := p.layers[key][v]; lv != nil {
			total += lv.UnzippedSize
		}
	}
	p.mu.Unlock()
	if total > maxUnzippedBytes {
		return errInvalid("Function code combined with layers exceeds the maximum allowed size of %d bytes. The actual size is %d bytes.", maxUnzippedBytes, total)
	}
	return nil
}

// layerZips are the zips of a function's layers, in mount order.
func (p *Platform) layerZips(layers []LayerRef) []string {
	out := make([]string, 0, len(layers))
	for _, l := range layers {
		key, v, _ := layerVersionKey(l.Arn)
		out = append(out, p.layerStore().zipPath(key, v))
	}
	return out
}

// unzippedSize is what a package's files take unpacked, from its central directory (checkPackage
// made sure at upload that the entries hold no more than that).
func unzippedSize(path string) (int64, error) {
	r, err := zip.OpenReader(path)
	if err != nil {
		return 0, errCouldNotUnzip()
	}
	defer r.Close()
	var n uint64
	for _, f := range r.File {
		n += f.UncompressedSize64
	}
	return int64(n), nil
}
