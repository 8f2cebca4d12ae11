package platform

import (
	"errors"
	"maps"
	"math"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Versions and aliases, as Lambda has them. A version is an immutable snapshot of $LATEST's
// code and configuration, numbered 1, 2, … (numbers are never reused); its package is a hard
// link to the package $LATEST had when it was published (store.go). An alias names one version.
// Invocations of a version run its own code and configuration, on instances of their own: a
// warm instance of version 1 never serves $LATEST (instance pools are per version, invoke.go).
// A weighted alias (RoutingConfig.AdditionalVersionWeights) sends each invocation to its one
// additional version with that version's weight as probability, to FunctionVersion otherwise
// (routeAlias); as on Lambda, at most one additional version, weights in [0, 1], and no $LATEST.

// publishedVersion is one version: its configuration as Lambda shows it and the $LATEST
// generation it was taken from (lifecycle.go marks it Active with that generation).
type publishedVersion struct {
	Config     FunctionConfiguration `json:"config"`
	Generation int                   `json:"generation"`
}

// Alias is Lambda's AliasConfiguration.
type Alias struct {
	AliasArn        string                     `json:"AliasArn"`
	Name            string                     `json:"Name"`
	FunctionVersion string                     `json:"FunctionVersion"`
	Description     string                     `json:"Description"`
	RoutingConfig   *AliasRoutingConfiguration `json:"RoutingConfig,omitempty"`
	RevisionId      string                     `json:"RevisionId"`
}

type AliasRoutingConfiguration struct {
	AdditionalVersionWeights map[string]float64 `json:"AdditionalVersionWeights"`
}

func (rc *AliasRoutingConfiguration) weights() map[string]float64 {
	if rc == nil {
		return nil
	}
	return rc.AdditionalVersionWeights
}

// aliasNameRE is Lambda's alias name: not all digits (that would be a version).
var aliasNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)

// errPreconditionFailed names the API to call; AWS words it "GetFunction/GetAlias" for a function's and an alias's RevisionId
// (UpdateFunctionCode, UpdateFunctionConfiguration, PublishVersion, UpdateAlias in
// test_lambda_api's recording).
func errPreconditionFailed(what string) error {
	return &apiError{http.StatusPreconditionFailed, "PreconditionFailedException",
		"The Revision Id provided does not match the latest Revision Id. Call the " + what +
			" API to retrieve the latest Revision Id", ""}
}

// checkRevision refuses a RevisionId that is given and is not the current one.
func checkRevision(given, current string) error {
	if given != "" && given != current {
		return errPreconditionFailed("GetFunction/GetAlias")
	}
	return nil
}

func errAliasNotFound(k fnKey, alias string) error {
	return &notFoundError{"Cannot find alias arn: " + k.qualifiedARN(alias)}
}

// target is what a qualified reference resolves to: the configuration to run or show, the
// package, and the version executed.
type target struct {
	config   FunctionConfiguration
	codePath string
	version  string // "$LATEST" or a number: X-Amz-Executed-Version, AWS_LAMBDA_FUNCTION_VERSION
}

// resolve finds the version ref names in f: $LATEST without a qualifier, a number, or the
// version an alias points to. The configuration's FunctionArn is qualified as the caller
// qualified it (by the alias for an alias), as Lambda answers.
func (p *Platform) resolve(f *Function, ref funcRef) (target, error) {
	key := f.key()
	q := ref.Qualifier
	if q == "" || q == "$LATEST" {
		t := target{config: f.Config, codePath: p.store.codePath(key), version: "$LATEST"}
		t.config.FunctionArn = key.qualifiedARN(q)
		return t, nil
	}
	version := q
	if !versionRE.MatchString(q) {
		a, ok := f.Aliases[q]
		if !ok {
			return target{}, errNotFound(key, q)
		}
		if a.FunctionVersion == "$LATEST" {
			t := target{config: f.Config, codePath: p.store.codePath(key), version: "$LATEST"}
			t.config.FunctionArn = key.qualifiedARN(q)
			return t, nil
		}
		version = a.FunctionVersion
	}
	v := f.version(version)
	if v == nil {
		return target{}, errNotFound(key, q)
	}
	t := target{config: v.Config, codePath: p.store.versionCodePath(key, version), version: version}
	t.config.FunctionArn = key.qualifiedARN(q)
	return t, nil
}

func (f *Function) version(n string) *publishedVersion {
	for _, v := range f.Versions {
		if v.Config.Version == n {
			return v
		}
	}
	return nil
}

// PublishInput is PublishVersion's request.
type PublishInput struct {
	CodeSha256, Description, RevisionId string
}

// PublishVersion publishes $LATEST as a new version. As on Lambda, nothing is published when
// $LATEST has not changed since the last version (that version is returned), a CodeSha256 or
// RevisionId that is not $LATEST's is refused, and a function being created or updated cannot
// be published until that ends.
func (p *Platform) PublishVersion(key fnKey, in PublishInput) (FunctionConfiguration, error) {
	p.commitMu.Lock()
	defer p.commitMu.Unlock()
	f, err := p.function(key)
	if err != nil {
		return FunctionConfiguration{}, err
	}
	if err := updatable(f); err != nil {
		return FunctionConfiguration{}, err
	}
	if in.CodeSha256 != "" && in.CodeSha256 != f.Config.CodeSha256 {
		return FunctionConfiguration{}, errInvalid("CodeSHA256 (%s) is different from current CodeSHA256 in $LATEST (%s). Please try again with the CodeSHA256 in $LATEST.",
			in.CodeSha256, f.Config.CodeSha256)
	}
	if err := checkRevision(in.RevisionId, f.Config.RevisionId); err != nil {
		return FunctionConfiguration{}, err
	}
	if n := len(f.Versions); n > 0 && f.Versions[n-1].Generation == f.Generation {
		last := f.Versions[n-1].Config
		last.FunctionArn = key.qualifiedARN(last.Version)
		return last, nil
	}
	next := *f
	next.Versions = append([]*publishedVersion(nil), f.Versions...)
	out, err := p.publishLocked(&next, nil, in.Description)
	if err != nil {
		return FunctionConfiguration{}, err
	}
	p.mu.Lock()
	p.functions[key] = &next
	p.mu.Unlock()
	return out, nil
}

// publishLocked adds a version of next's $LATEST to next and persists next, moving code (when
// not nil) into place first; the caller holds commitMu and publishes next in the table. A
// version taken while $LATEST is Pending or InProgress is Pending until that work ends.
func (p *Platform) publishLocked(next *Function, code *stagedCode, description string) (FunctionConfiguration, error) {
	key := next.key()
	if err := p.store.placeCode(key, code); err != nil {
		return FunctionConfiguration{}, err
	}
	n := strconv.Itoa(next.LastVersion + 1)
	if err := p.store.linkVersion(key, n); err != nil {
		return FunctionConfiguration{}, err
	}
	v := next.Config
	v.Version, v.FunctionArn, v.RevisionId = n, key.qualifiedARN(n), newRevision()
	// Publishing gives $LATEST a new RevisionId too (test_function_revisions_version_and_alias:
	// "publish_version changes the revision id of $LATEST").
	next.Config.RevisionId = newRevision()
	if description != "" {
		v.Description = description
	}
	if v.State == "Active" && v.LastUpdateStatus == "InProgress" {
		setPending(&v)
	}
	v.LastUpdateStatus, v.LastUpdateStatusReason, v.LastUpdateStatusReasonCode = "", "", ""
	if v.State == "Active" {
		v.LastUpdateStatus = "Successful"
	}
	next.Versions = append(next.Versions, &publishedVersion{Config: v, Generation: next.Generation})
	next.LastVersion++
	if err := p.store.commit(next, nil); err != nil {
		p.store.removeVersion(key, n)
		return FunctionConfiguration{}, err
	}
	return v, nil
}

// ListVersions lists $LATEST and the published versions, in order, a page at a time: up to
// max from the one named by marker, and the marker of the next page ("" on the last).
func (p *Platform) ListVersions(key fnKey, marker string, max int) ([]FunctionConfiguration, string, error) {
	f, err := p.function(key)
	if err != nil {
		return nil, "", err
	}
	latest := f.Config
	latest.FunctionArn = key.qualifiedARN("$LATEST")
	all := []FunctionConfiguration{listed(latest)}
	for _, v := range f.Versions {
		all = append(all, listed(v.Config))
	}
	start := 0
	if marker != "" {
		start = len(all)
		for i, c := range all {
			if c.Version == marker {
				start = i
				break
			}
		}
	}
	out := []FunctionConfiguration{}
	next := ""
	for i := start; i < len(all); i++ {
		if len(out) == max {
			next = all[i].Version
			break
		}
		out = append(out, all[i])
	}
	return out, next, nil
}

// errNoVersion stops a delete of a version the function does not have.
var errNoVersion = errors.New("no such version")

// deleteVersion removes a published version. One the existing function does not have is no
// error: AWS answers it as a success, again and again (test_delete_on_nonexisting_version's
// recording: "delete function on a random qualifier is idempotent").
func (p *Platform) deleteVersion(key fnKey, n string) error {
	_, err := p.replace(key, func(next *Function) error {
		i := -1
		for j, v := range next.Versions {
			if v.Config.Version == n {
				i = j
			}
		}
		if i < 0 {
			return errNoVersion
		}
		var refs []string
		for _, a := range next.Aliases {
			if _, routed := a.RoutingConfig.weights()[n]; a.FunctionVersion == n || routed {
				refs = append(refs, "'"+a.Name+"'")
			}
		}
		if len(refs) > 0 {
			sort.Strings(refs)
			return errConflict("Unable to delete version because the following aliases reference it: [%s]", strings.Join(refs, ", "))
		}
		next.Versions = append(next.Versions[:i], next.Versions[i+1:]...)
		next.dropQualified(n)
		return nil
	})
	if errors.Is(err, errNoVersion) {
		return nil
	}
	if err != nil {
		return err
	}
	p.retireIdle(poolKey{key, n})
	p.store.removeVersion(key, n)
	return nil
}

// AliasInput is CreateAlias's and UpdateAlias's request; nil fields of an update stay.
type AliasInput struct {
	Name            string
	FunctionVersion *string
	Description     *string
	RoutingConfig   *AliasRoutingConfiguration
	RevisionId      string
}

// checkRouting checks a RoutingConfig's form, in the order and words of AWS's recorded answers
// (test_notfound_and_invalid_routingconfigs): more than one entry, then the keys' pattern and
// the weights' range as one ValidationException (AWS shows the map as Java prints it: {2=2.0}).
// What needs the function (the versions exist, none is FunctionVersion) is checkRoutingTarget's.
func checkRouting(rc *AliasRoutingConfiguration) error {
	if rc == nil || len(rc.AdditionalVersionWeights) == 0 {
		return nil
	}
	if len(rc.AdditionalVersionWeights) > 1 {
		return errInvalid("Number of items in AdditionalVersionWeights cannot be greater than 1")
	}
	for k, w := range rc.AdditionalVersionWeights {
		shown := "{" + k + "=" + javaDouble(w) + "}"
		if !versionRE.MatchString(k) || len(k) > 1024 {
			return errValidation(shown, "routingConfig.additionalVersionWeights",
				"Map keys must satisfy constraint: [Member must have length less than or equal to 1024, Member must have length greater than or equal to 1, Member must satisfy regular expression pattern: [0-9]+]")
		}
		if w < 0 || w > 1 || math.IsNaN(w) {
			return errValidation(shown, "routingConfig.additionalVersionWeights",
				"Map value must satisfy constraint: [Member must have value less than or equal to 1.0, Member must have value greater than or equal to 0.0, Member must not be null]")
		}
	}
	return nil
}

// javaDouble writes a float as Java's Double.toString does for the weights AWS echoes (2.0, 0.5).
func javaDouble(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eEN") {
		s += ".0"
	}
	return s
}

// checkRoutingTarget checks a RoutingConfig against the function and the alias's version:
// the additional version is not the alias's own, exists, and the alias does not name $LATEST
// (AWS's words, recorded in test_notfound_and_invalid_routingconfigs).
func checkRoutingTarget(f *Function, version string, rc *AliasRoutingConfiguration) error {
	if rc == nil {
		return nil
	}
	for k := range rc.AdditionalVersionWeights {
		if k == version {
			return errInvalid("Invalid function version %s. Function version %s is already included in routing configuration.", k, k)
		}
		if version == "$LATEST" {
			// AWS writes this one without "Type" (target_version_exc_version_latest)
			return untypedError{&apiError{http.StatusBadRequest, "InvalidParameterValueException",
				"$LATEST is not supported for an alias pointing to more than 1 version", ""}}
		}
		if f.version(k) == nil {
			return errNotFound(f.key(), k)
		}
	}
	return nil
}

// routingOrNil is what an alias keeps: an empty map routes nothing, and AWS then answers without
// RoutingConfig (create_alias_empty_routingconfig, update_alias_1_1 in the recording).
func routingOrNil(rc *AliasRoutingConfiguration) *AliasRoutingConfiguration {
	if rc == nil || len(rc.AdditionalVersionWeights) == 0 {
		return nil
	}
	return &AliasRoutingConfiguration{AdditionalVersionWeights: maps.Clone(rc.AdditionalVersionWeights)}
}

// routeAlias is the version one invocation of alias a runs, given u uniform in [0, 1): its
// additional version with probability its weight, FunctionVersion otherwise (Lambda's weighted
// alias: "Lambda routes traffic ... based on the weight", AWS Lambda Developer Guide,
// configuring-alias-routing).
func routeAlias(a *Alias, u float64) string {
	if a.RoutingConfig != nil {
		for v, w := range a.RoutingConfig.AdditionalVersionWeights {
			if u < w {
				return v
			}
		}
	}
	return a.FunctionVersion
}

// checkAliasTarget checks that an alias may point to version v of f.
func checkAliasTarget(f *Function, v string) error {
	if v != "$LATEST" && (!versionRE.MatchString(v) || f.version(v) == nil) {
		return errNotFound(f.key(), v)
	}
	return nil
}

// CreateAlias names a version of the function.
func (p *Platform) CreateAlias(key fnKey, in AliasInput) (Alias, error) {
	if !aliasNameRE.MatchString(in.Name) || versionRE.MatchString(in.Name) || in.Name == "$LATEST" {
		return Alias{}, errValidation(in.Name, "name", "Member must satisfy regular expression pattern: (?!^[0-9]+$)([a-zA-Z0-9-_]+)")
	}
	if in.FunctionVersion == nil || *in.FunctionVersion == "" {
		return Alias{}, errValidation("", "functionVersion", "Member must not be null")
	}
	if err := checkRouting(in.RoutingConfig); err != nil {
		return Alias{}, err
	}
	if !p.exists(key) {
		// AWS names the version the alias was to point to (routing_config_exc_fn_doesnotexist)
		return Alias{}, errNotFound(key, *in.FunctionVersion)
	}
	var out Alias
	_, err := p.replace(key, func(next *Function) error {
		if _, ok := next.Aliases[in.Name]; ok {
			return errConflict("Alias already exists: %s", key.qualifiedARN(in.Name))
		}
		if err := checkAliasTarget(next, *in.FunctionVersion); err != nil {
			return err
		}
		if err := checkRoutingTarget(next, *in.FunctionVersion, in.RoutingConfig); err != nil {
			return err
		}
		out = Alias{AliasArn: key.qualifiedARN(in.Name), Name: in.Name, FunctionVersion: *in.FunctionVersion,
			RoutingConfig: routingOrNil(in.RoutingConfig), RevisionId: newRevision()}
		if in.Description != nil {
			out.Description = *in.Description
		}
		if next.Aliases == nil {
			next.Aliases = map[string]*Alias{}
		}
		a := out
		next.Aliases[in.Name] = &a
		return nil
	})
	return out, err
}

// GetAlias returns an alias.
func (p *Platform) GetAlias(key fnKey, name string) (Alias, error) {
	f, err := p.function(key)
	if err != nil {
		return Alias{}, err
	}
	a, ok := f.Aliases[name]
	if !ok {
		return Alias{}, errAliasNotFound(key, name)
	}
	return *a, nil
}

// UpdateAlias points an alias elsewhere or changes its description. Warm instances stay: they
// belong to versions, not aliases.
func (p *Platform) UpdateAlias(key fnKey, in AliasInput) (Alias, error) {
	if err := checkRouting(in.RoutingConfig); err != nil {
		return Alias{}, err
	}
	var out Alias
	_, err := p.replace(key, func(next *Function) error {
		cur, ok := next.Aliases[in.Name]
		if !ok {
			// UpdateAlias words it otherwise than GetAlias on AWS (test_non_existent_alias_update's
			// recording: "Alias not found: ARN"; GetAlias: "Cannot find alias arn: ARN").
			return &notFoundError{"Alias not found: " + key.qualifiedARN(in.Name)}
		}
		if in.RevisionId != "" && in.RevisionId != cur.RevisionId {
			return errPreconditionFailed("GetFunction/GetAlias")
		}
		out = *cur
		if in.FunctionVersion != nil {
			if err := checkAliasTarget(next, *in.FunctionVersion); err != nil {
				return err
			}
			out.FunctionVersion = *in.FunctionVersion
		}
		if in.Description != nil {
			out.Description = *in.Description
		}
		if in.RoutingConfig != nil {
			out.RoutingConfig = routingOrNil(in.RoutingConfig)
		}
		if err := checkRoutingTarget(next, out.FunctionVersion, out.RoutingConfig); err != nil {
			return err
		}
		out.RevisionId = newRevision()
		a := out
		next.Aliases[in.Name] = &a
		return nil
	})
	return out, err
}

// DeleteAlias removes an alias; like Lambda's, deleting one that does not exist succeeds.
func (p *Platform) DeleteAlias(key fnKey, name string) error {
	_, err := p.replace(key, func(next *Function) error {
		delete(next.Aliases, name)
		next.dropQualified(name)
		return nil
	})
	return err
}

// ListAliases lists a function's aliases by name (only those pointing to version, when given),
// a page at a time.
func (p *Platform) ListAliases(key fnKey, version, marker string, max int) ([]Alias, string, error) {
	f, err := p.function(key)
	if err != nil {
		return nil, "", err
	}
	names := make([]string, 0, len(f.Aliases))
	for n, a := range f.Aliases {
		if version == "" || a.FunctionVersion == version {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := []Alias{}
	next := ""
	for i := sort.SearchStrings(names, marker); i < len(names); i++ {
		if len(out) == max {
			next = names[i]
			break
		}
		out = append(out, *f.Aliases[names[i]])
	}
	return out, next, nil
}

// notLatestOnly is Lambda's answer to a qualifier on an operation that acts on the function
// itself ($LATEST), such as UpdateFunctionCode or PublishVersion.
func notLatestOnly(ref funcRef) error {
	if ref.Qualifier != "" && ref.Qualifier != "$LATEST" {
		return errInvalid("Current operation does not support versions other than $LATEST. Please set version to $LATEST or do not set a version in your request.")
	}
	return nil
}

// ListFunctionsAll is ListFunctions with FunctionVersion=ALL: each function's $LATEST (its ARN
// qualified by $LATEST, as AWS lists it) and then its published versions, functions by name. The
// marker is "name:version" of the entry to start at.
func (p *Platform) ListFunctionsAll(region, marker string, max int) (list []FunctionConfiguration, next string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	names := p.functionNamesLocked(region)
	type entry struct {
		mark string
		cfg  FunctionConfiguration
	}
	var all []entry
	for _, n := range names {
		f := p.functions[fnKey{region, n}]
		latest := f.Config
		latest.FunctionArn = f.key().qualifiedARN("$LATEST")
		// listed: as the default list shows them (test_list_functions' list_all items)
		all = append(all, entry{n + ":$LATEST", listed(latest)})
		for _, v := range f.Versions {
			all = append(all, entry{n + ":" + v.Config.Version, listed(v.Config)})
		}
	}
	start := 0
	if marker != "" {
		start = len(all)
		for i, e := range all {
			if e.mark == marker {
				start = i
				break
			}
		}
	}
	list = []FunctionConfiguration{}
	for i := start; i < len(all); i++ {
		if len(list) == max {
			next = all[i].mark
			break
		}
		list = append(list, all[i].cfg)
	}
	return list, next
}
