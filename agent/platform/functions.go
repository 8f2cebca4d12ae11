package platform

import (
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"math"
	"sort"
	"strconv"
	"time"
)

// The platform's operations on functions. The Lambda API (package lambdaapi) translates HTTP
// requests into these calls and their errors into AWS error responses; the core owns p.mu and holds it only to read or change
// the in-memory tables, never across disk I/O, because every invoke takes it too.
//
// Changes to a function are committed in two steps, each under its own lock: the package and
// function.json on disk under p.commitMu, then the table entry under p.mu. Holding commitMu
// across both keeps disk and memory changing in the same order when two changes race; invokes
// never take it, and nobody holds it while a package is uploaded (that happens before, into a
// staging file). A published *Function is never modified: an update publishes a new one, so an
// invocation may keep reading the one it started with.

// Errors of the core; awsError (awserror.go) maps each kind to its AWS error code.
type (
	notFoundError         struct{ msg string }
	conflictError         struct{ msg string }
	invalidParameterError struct{ msg string }
)

func (e *notFoundError) Error() string         { return e.msg }
func (e *conflictError) Error() string         { return e.msg }
func (e *invalidParameterError) Error() string { return e.msg }

// errNotFound is a function, or a version or alias of it (qualifier), that does not exist.
func errNotFound(k fnKey, qualifier string) error {
	return &notFoundError{"Function not found: " + k.qualifiedARN(qualifier)}
}

func errExists(name string) error { return &conflictError{"Function already exist: " + name} }

func errConflict(format string, args ...any) error {
	return &conflictError{fmt.Sprintf(format, args...)}
}

// errInvalid is a request the platform refuses: a value outside Lambda's limits, a malformed
// field, an unknown tag value.
func errInvalid(format string, args ...any) error {
	return &invalidParameterError{fmt.Sprintf(format, args...)}
}

// errThrottled is an invocation refused because the account's concurrency is exhausted.
var errThrottled = errors.New("throttled")

// Settings are the limits and environment CreateFunction and UpdateConfiguration share; nil
// keeps the current value (the default, on create).
type Settings struct {
	Timeout          *int
	MemorySize       *int
	EphemeralStorage *EphemeralStorage
	Environment      *Environment
}

// CreateFunctionInput is a function to create, its request already parsed.
type CreateFunctionInput struct {
	Name, Runtime, Role, Handler, Description string
	Region                                    string // "" is us-east-1
	Publish                                   bool   // publish version 1 at once (CreateFunction's Publish)
	Architecture                              string // "x86_64" or "arm64"
	Settings
	Tags   map[string]string
	Code   io.Reader  // the zip package; read to its end before the function exists
	Layers []string   // layer version ARNs, in mount order (layers.go)
	Shape  ShapeInput // LoggingConfig, TracingConfig (configshape.go)
}

// CreateFunction validates, persists and publishes a new function. A name that exists, or
// that a concurrent create publishes first, gives a conflictError.
func (p *Platform) CreateFunction(in CreateFunctionInput) (FunctionConfiguration, error) {
	if err := checkFunctionName(in.Name); err != nil { // the name is a directory in the store
		return FunctionConfiguration{}, err
	}
	if err := checkRole(in.Role); err != nil {
		return FunctionConfiguration{}, err
	}
	if in.Region == "" {
		in.Region = defaultRegion
	}
	key := fnKey{in.Region, in.Name}
	f := &Function{Tags: maps.Clone(in.Tags), Region: in.Region, Config: FunctionConfiguration{
		FunctionName: in.Name, FunctionArn: key.arn(),
		Runtime: in.Runtime, Role: in.Role, Handler: in.Handler, Description: in.Description,
		Timeout: defaultTimeoutS, MemorySize: defaultMemoryMB, Version: "$LATEST",
		PackageType:   "Zip",
		Architectures: []string{in.Architecture}, EphemeralStorage: EphemeralStorage{Size: minEphemeralMB},
	}}
	setPending(&f.Config)
	if err := applyShape(&f.Config, in.Shape); err != nil {
		return FunctionConfiguration{}, err
	}
	f.Generation = p.newGeneration()
	if f.Tags == nil {
		f.Tags = map[string]string{}
	}
	if err := applySettings(&f.Config, in.Settings); err != nil {
		return FunctionConfiguration{}, err
	}
	if err := checkTagLimits(f.Tags); err != nil {
		return FunctionConfiguration{}, err
	}
	if err := p.checkTags(f); err != nil {
		return FunctionConfiguration{}, err
	}
	if len(in.Layers) > 0 {
		layers, err := p.resolveLayers(in.Region, in.Layers, nil)
		if err != nil {
			return FunctionConfiguration{}, err
		}
		f.Config.Layers = layers
	}
	if p.exists(key) { // before writing a package that could only be thrown away
		return FunctionConfiguration{}, errExists(in.Name)
	}
	code, err := p.stage(in.Code)
	if err != nil {
		return FunctionConfiguration{}, err
	}
	defer code.discard()
	setCode(&f.Config, code)
	if err := p.checkCombinedSize(code.path, f.Config.Layers); err != nil {
		return FunctionConfiguration{}, err
	}

	p.commitMu.Lock()
	defer p.commitMu.Unlock()
	if p.exists(key) { // another create won the race while this package was written
		return FunctionConfiguration{}, errExists(in.Name)
	}
	if len(in.Layers) > 0 { // again: a layer version may have been deleted meanwhile
		if _, err := p.resolveLayers(in.Region, in.Layers, nil); err != nil {
			return FunctionConfiguration{}, err
		}
	}
	if err := p.checkCodeStorage(code.size, 0); err != nil {
		return FunctionConfiguration{}, err
	}
	out := f.Config
	if in.Publish {
		// The version's package is the function's, linked once it is in place (versions.go).
		if out, err = p.publishLocked(f, code, ""); err != nil {
			return FunctionConfiguration{}, err
		}
		// AWS answers version 1's configuration under the function's unqualified ARN
		// (test_publish_version_on_create's and test_list_functions' recorded create_response).
		out.FunctionArn = key.arn()
	} else if err := p.store.commit(f, code); err != nil {
		return FunctionConfiguration{}, err
	}
	p.mu.Lock()
	p.functions[key] = f
	p.mu.Unlock()
	p.startPreparing(key, f.Generation, true, 0)
	return out, nil
}

// FunctionDetails is what GetFunction tells about a function.
type FunctionDetails struct {
	Config   FunctionConfiguration
	Tags     map[string]string
	CodePath string // the package on disk
	// ReservedConcurrency is the function's reservation (concurrency.go), nil when none.
	ReservedConcurrency *int
}

// GetFunction returns the configuration, tags and package location of a function, or of the
// version or alias ref names.
func (p *Platform) GetFunction(ref funcRef) (FunctionDetails, error) {
	f, err := p.function(ref.fnKey)
	if err != nil {
		return FunctionDetails{}, errNotFound(ref.fnKey, ref.Qualifier)
	}
	t, err := p.resolve(f, ref)
	if err != nil {
		return FunctionDetails{}, err
	}
	return FunctionDetails{Config: t.config, Tags: maps.Clone(f.Tags), CodePath: t.codePath,
		ReservedConcurrency: f.ReservedConcurrency}, nil
}

// functionNamesLocked is a region's function names in order; p.mu is held.
func (p *Platform) functionNamesLocked(region string) []string {
	names := make([]string, 0, len(p.functions))
	for k := range p.functions {
		if k.Region == region {
			names = append(names, k.Name)
		}
	}
	sort.Strings(names)
	return names
}

// ListFunctions returns up to max $LATEST configurations of a region's functions in name
// order, starting at the first name not before marker, and the marker of the next page ("" on
// the last).
func (p *Platform) ListFunctions(region, marker string, max int) (list []FunctionConfiguration, next string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	names := p.functionNamesLocked(region)
	list = []FunctionConfiguration{}
	for i := sort.SearchStrings(names, marker); i < len(names) && len(list) < max; i++ {
		list = append(list, listed(p.functions[fnKey{region, names[i]}].Config))
		if len(list) == max && i+1 < len(names) {
			next = names[i+1]
		}
	}
	return list, next
}

// ConfigurationUpdate is UpdateFunctionConfiguration's input; nil fields stay as they are.
type ConfigurationUpdate struct {
	Settings
	Description, Role, Handler, Runtime *string
	Layers                              *[]string // replaces the function's layers ([] removes them)
	Shape                               ShapeInput
	RevisionId                          string // "" or $LATEST's, else PreconditionFailedException
}

// UpdateConfiguration changes settings; like AWS, the next invocation gets a fresh instance.
func (p *Platform) UpdateConfiguration(key fnKey, u ConfigurationUpdate) (FunctionConfiguration, error) {
	if u.Role != nil {
		if err := checkRole(*u.Role); err != nil {
			return FunctionConfiguration{}, err
		}
	}
	return p.update(key, nil, false, func(next *Function) error {
		if err := checkRevision(u.RevisionId, next.Config.RevisionId); err != nil {
			return err
		}
		if err := applySettings(&next.Config, u.Settings); err != nil {
			return err
		}
		for dst, src := range map[*string]*string{&next.Config.Description: u.Description,
			&next.Config.Role: u.Role, &next.Config.Handler: u.Handler, &next.Config.Runtime: u.Runtime} {
			if src != nil {
				*dst = *src
			}
		}
		if u.Layers != nil {
			layers, err := p.resolveLayers(key.Region, *u.Layers, next.Config.Layers)
			if err != nil {
				return err
			}
			if err := p.checkCombinedSize(p.store.codePath(key), layers); err != nil {
				return err
			}
			next.Config.Layers = layers
		}
		if err := applyShape(&next.Config, u.Shape); err != nil { // after Runtime: its version
			return err
		}
		return p.checkTags(next)
	})
}

// UpdateCode replaces a function's package; the next invocation gets a fresh instance. With
// publish, the new code and configuration are published as a version at once.
func (p *Platform) UpdateCode(key fnKey, code io.Reader, publish bool) (FunctionConfiguration, error) {
	return p.UpdateCodeIf(key, code, publish, "")
}

// UpdateCodeIf is UpdateCode refused with PreconditionFailedException unless revisionID is ""
// or $LATEST's RevisionId (UpdateFunctionCode's RevisionId).
func (p *Platform) UpdateCodeIf(key fnKey, code io.Reader, publish bool, revisionID string) (FunctionConfiguration, error) {
	if f, err := p.function(key); err != nil { // before writing a package that could only be thrown away
		return FunctionConfiguration{}, err
	} else if err := updatable(f); err != nil {
		return FunctionConfiguration{}, err
	} else if err := checkRevision(revisionID, f.Config.RevisionId); err != nil {
		return FunctionConfiguration{}, err
	}
	staged, err := p.stage(code)
	if err != nil {
		return FunctionConfiguration{}, err
	}
	defer staged.discard()
	return p.update(key, staged, publish, func(next *Function) error {
		if err := checkRevision(revisionID, next.Config.RevisionId); err != nil {
			return err
		}
		if err := p.checkCombinedSize(staged.path, next.Config.Layers); err != nil {
			return err
		}
		if err := p.checkCodeStorage(staged.size, next.Config.CodeSize); err != nil {
			return err
		}
		setCode(&next.Config, staged)
		next.Config.LastModified = lambdaTime(time.Now())
		next.Config.RevisionId = newRevision()
		return nil
	})
}

// update applies change to a copy of the function's $LATEST, persists it (with the staged
// package when code is not nil), publishes it (and a version of it with publishVersion),
// retires the warm instances of the old generation and starts the update's background work
// (lifecycle.go): the answer says InProgress.
func (p *Platform) update(key fnKey, code *stagedCode, publishVersion bool, change func(*Function) error) (FunctionConfiguration, error) {
	p.commitMu.Lock()
	defer p.commitMu.Unlock()
	f, err := p.function(key)
	if err != nil {
		return FunctionConfiguration{}, err
	}
	if err := updatable(f); err != nil {
		return FunctionConfiguration{}, err
	}
	next := *f
	if err := change(&next); err != nil {
		return FunctionConfiguration{}, err
	}
	next.Generation = p.newGeneration()
	setInProgress(&next.Config)
	out := next.Config
	if publishVersion {
		if out, err = p.publishLocked(&next, code, ""); err != nil {
			return FunctionConfiguration{}, err
		}
	} else if err := p.store.commit(&next, code); err != nil {
		return FunctionConfiguration{}, err
	}
	p.mu.Lock()
	p.functions[key] = &next
	p.reservedSum += reservation(&next) - reservation(f)
	p.mu.Unlock()
	p.retireIdle(poolKey{key, "$LATEST"})
	p.startPreparing(key, next.Generation, code != nil, p.cfg.UpdateWindow)
	p.collectLayers() // a layer version deleted meanwhile may have lost its last user
	return out, nil
}

// replace commits a change that leaves $LATEST's code as it is (versions, aliases, a finished
// state transition, tags, reserved concurrency): no new instance is needed unless change starts
// a new generation itself (a faascope:* tag that steers the platform), which retires the warm
// instances of the old one.
func (p *Platform) replace(key fnKey, change func(*Function) error) (*Function, error) {
	p.commitMu.Lock()
	defer p.commitMu.Unlock()
	return p.replaceLocked(key, change)
}

func (p *Platform) replaceLocked(key fnKey, change func(*Function) error) (*Function, error) {
	f, err := p.function(key)
	if err != nil {
		return nil, err
	}
	next := *f
	next.Versions = append([]*publishedVersion(nil), f.Versions...)
	next.Aliases = maps.Clone(f.Aliases)
	if err := change(&next); err != nil {
		return nil, err
	}
	if err := p.store.commit(&next, nil); err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.functions[key] = &next
	p.reservedSum += reservation(&next) - reservation(f)
	p.mu.Unlock()
	if next.Generation != f.Generation {
		p.retireIdle(poolKey{key, "$LATEST"})
	}
	return &next, nil
}

// DeleteFunction removes a function with its versions and aliases, its warm instances and its
// files (busy instances end with their invocation); with a version qualifier, that version.
func (p *Platform) DeleteFunction(ref funcRef) error {
	// AWS's order: a qualifier that names $LATEST or an alias is refused whether or not the
	// function exists; then a missing function is named without the qualifier ("$latest" is
	// neither); a version that does not exist is deleted already.
	switch q := ref.Qualifier; {
	case q == "$LATEST":
		return errInvalid("$LATEST version cannot be deleted without deleting the function.")
	case q != "" && aliasNameRE.MatchString(q) && !versionRE.MatchString(q):
		return errInvalid("Deletion of aliases is not currently supported.")
	case q != "" && !p.exists(ref.fnKey):
		return errNotFound(ref.fnKey, "")
	case q != "":
		return p.deleteVersion(ref.fnKey, q)
	}
	key := ref.fnKey
	// commitMu keeps a create of the same name from committing files that this RemoveAll would
	// then take away.
	p.commitMu.Lock()
	defer p.commitMu.Unlock()
	p.mu.Lock()
	f, ok := p.functions[key]
	delete(p.functions, key)
	p.reservedSum -= reservation(f)
	p.mu.Unlock()
	if !ok {
		return errNotFound(key, "")
	}
	p.retireFunction(key)
	p.dropLog(key) // logs.go
	if err := p.store.remove(key); err != nil {
		log.Printf("delete %s: %v", key.arn(), err)
	}
	p.collectLayers() // the function may have been a deleted layer version's last user
	return nil
}

// function is the published state of a function.
func (p *Platform) function(key fnKey) (*Function, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, ok := p.functions[key]
	if !ok {
		return nil, errNotFound(key, "")
	}
	return f, nil
}

func (p *Platform) exists(key fnKey) bool {
	_, err := p.function(key)
	return err == nil
}

// stage writes a package to the staging area; an empty one is refused.
func (p *Platform) stage(code io.Reader) (*stagedCode, error) {
	if code == nil {
		return nil, errInvalid("Code: a zip package is required")
	}
	staged, err := p.store.stage(code)
	if err != nil {
		return nil, err
	}
	if staged.size == 0 {
		staged.discard()
		return nil, errInvalid("Code: a zip package is required")
	}
	return staged, nil
}

func setCode(c *FunctionConfiguration, code *stagedCode) {
	c.CodeSize = code.size
	c.CodeSha256 = code.sha256
}

// checkFunctionName checks a plain function name (the name is a directory in the store): as
// CreateFunction's FunctionName (names.go), and without the ARN forms.
func checkFunctionName(name string) error {
	if functionNameRE.MatchString(name) {
		return nil
	}
	if _, err := parseCreateFunctionName(name, defaultRegion); err != nil {
		return err
	}
	return errValidations(patternFault(name, "functionName", createFunctionNamePattern))
}

// Bounds of Lambda's API model (botocore's lambda service-2.json): a value outside them fails
// the model's validation (ValidationException); inside them but beyond the service's limits
// (minMemoryMB… in function.go) it is the service's InvalidParameterValueException.
const (
	modelMaxMemoryMB = 32768
	modelMinTimeoutS = 1
)

// checkRange refuses v outside [lo, hi]: against the API model first, then the service.
func checkRange(field, modelField string, v, modelLo, modelHi, lo, hi int, unit string) error {
	switch {
	case v < modelLo:
		return errValidation(strconv.Itoa(v), modelField, fmt.Sprintf("Member must have value greater than or equal to %d", modelLo))
	case v > modelHi:
		return errValidation(strconv.Itoa(v), modelField, fmt.Sprintf("Member must have value less than or equal to %d", modelHi))
	case v < lo || v > hi:
		return errInvalid("%s %d must be between %d and %d %s", field, v, lo, hi, unit)
	}
	return nil
}

// checkTags validates the tags that steer the local platform.
func (p *Platform) checkTags(f *Function) error {
	if v, ok := f.Tags[TagProfile]; ok {
		if _, err := LimitsFor(v, f.Config.MemorySize, f.Config.EphemeralStorage.Size); err != nil {
			return errInvalid("Tags[%s]: %v", TagProfile, err)
		}
	}
	if v, ok := f.Tags[TagKeepAlive]; ok {
		if s, err := strconv.ParseFloat(v, 64); err != nil || s < 0 {
			return errInvalid("Tags[%s] must be a number of seconds ≥ 0, got %q", TagKeepAlive, v)
		}
	}
	if v, ok := f.Tags[TagExpose]; ok {
		if _, err := ParsePorts(v); err != nil {
			return errInvalid("Tags[%s]: %v", TagExpose, err)
		}
	}
	if v, ok := f.Tags[TagNetShape]; ok {
		if _, err := ParseNetShape(v, p.cfg.Calibration); err != nil {
			return errInvalid("Tags[%s]: %v", TagNetShape, err)
		}
	}
	if _, err := LimitsFor(p.profileOf(f), f.Config.MemorySize, f.Config.EphemeralStorage.Size); err != nil {
		return errInvalid("MemorySize: %v", err)
	}
	return nil
}

// applySettings checks the settings against Lambda's limits and applies them, marking the
// configuration as changed.
func applySettings(c *FunctionConfiguration, s Settings) error {
	if s.Timeout != nil {
		if err := checkRange("Timeout", "timeout", *s.Timeout, modelMinTimeoutS, math.MaxInt32, minTimeoutS, maxTimeoutS, "seconds"); err != nil {
			return err
		}
		c.Timeout = *s.Timeout
	}
	if s.MemorySize != nil {
		if err := checkRange("MemorySize", "memorySize", *s.MemorySize, minMemoryMB, modelMaxMemoryMB, minMemoryMB, maxMemoryMB, "MB"); err != nil {
			return err
		}
		c.MemorySize = *s.MemorySize
	}
	if eph := s.EphemeralStorage; eph != nil {
		if err := checkRange("EphemeralStorage.Size", "ephemeralStorage.size", eph.Size, minEphemeralMB, maxEphemeralMB, minEphemeralMB, maxEphemeralMB, "MB"); err != nil {
			return err
		}
		c.EphemeralStorage = *eph
	}
	if env := s.Environment; env != nil {
		if err := checkEnvironment(env.Variables, env.order); err != nil { // env.go
			return err
		}
		c.Environment = env
	}
	c.LastModified = lambdaTime(time.Now())
	c.RevisionId = newRevision()
	return nil
}
