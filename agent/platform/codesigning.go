package platform

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"
)

// Code signing configs (CreateCodeSigningConfig, GetCodeSigningConfig,
// UpdateCodeSigningConfig, DeleteCodeSigningConfig, ListCodeSigningConfigs,
// ListFunctionsByCodeSigningConfig) and a function's (PutFunctionCodeSigningConfig,
// GetFunctionCodeSigningConfig, DeleteFunctionCodeSigningConfig), with AWS's recorded answers.
// Configs are files under dataDir/code-signing-configs (one per config, read on demand: they are
// few and rarely asked for), a function's is kept with the function (function.json). The
// platform keeps them but checks no signatures: it has no AWS Signer, so a package is deployed
// whatever the config's UntrustedArtifactOnDeployment says (docs/platform.md, Compatibility).

// CodeSigningConfig is Lambda's CodeSigningConfig.
type CodeSigningConfig struct {
	CodeSigningConfigId  string              `json:"CodeSigningConfigId"`
	CodeSigningConfigArn string              `json:"CodeSigningConfigArn"`
	Description          string              `json:"Description"`
	AllowedPublishers    AllowedPublishers   `json:"AllowedPublishers"`
	CodeSigningPolicies  CodeSigningPolicies `json:"CodeSigningPolicies"`
	LastModified         string              `json:"LastModified"`
}

type AllowedPublishers struct {
	SigningProfileVersionArns []string `json:"SigningProfileVersionArns"`
}

type CodeSigningPolicies struct {
	UntrustedArtifactOnDeployment string `json:"UntrustedArtifactOnDeployment"`
}

// CodeSigningInput is Create's and Update's request; nil fields of an update stay.
type CodeSigningInput struct {
	Description         *string
	AllowedPublishers   *AllowedPublishers
	CodeSigningPolicies *CodeSigningPolicies
}

var cscArnRE = regexp.MustCompile(`^arn:aws[a-zA-Z-]*:lambda:([a-z0-9-]+):(\d{12}):code-signing-config:(csc-[a-z0-9]{17})$`)

func (p *Platform) cscDir() string { return filepath.Join(p.cfg.DataDir, "code-signing-configs") }

// errCSCNotFound is AWS's answer for a missing config: unlike most of Lambda's errors, without
// "Type": "User" in its body (recorded), so botocore shows no Type.
func errCSCNotFound(arn string) error {
	return untypedError{&apiError{http.StatusNotFound, "ResourceNotFoundException",
		"The Lambda code signing configuration " + arn + " can not be found.", ""}}
}

// untypedError is an error whose body AWS writes without "Type" (the API adapter asks
// untyped).
type untypedError struct{ *apiError }

func (e untypedError) Unwrap() error { return e.apiError }

// untyped says whether err's AWS answer has no "Type" field in its body.
func untyped(err error) bool {
	var u untypedError
	return errors.As(err, &u)
}

// loadCSC reads the config an ARN names (nil when there is none).
func (p *Platform) loadCSC(arn string) (*CodeSigningConfig, error) {
	m := cscArnRE.FindStringSubmatch(arn)
	if m == nil || m[2] != accountID {
		return nil, nil
	}
	b, err := os.ReadFile(filepath.Join(p.cscDir(), m[1], m[3]+".json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c CodeSigningConfig
	return &c, json.Unmarshal(b, &c)
}

func (p *Platform) saveCSC(region string, c *CodeSigningConfig) error {
	dir := filepath.Join(p.cscDir(), region)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(c, "", " ")
	return writeAtomic(filepath.Join(dir, c.CodeSigningConfigId+".json"), b)
}

func (in CodeSigningInput) apply(c *CodeSigningConfig) error {
	if in.Description != nil {
		c.Description = *in.Description
	}
	if in.AllowedPublishers != nil {
		if n := len(in.AllowedPublishers.SigningProfileVersionArns); n < 1 || n > 20 {
			return errValidation("[...]", "allowedPublishers.signingProfileVersionArns", "Member must have length between 1 and 20")
		}
		c.AllowedPublishers = *in.AllowedPublishers
	}
	if in.CodeSigningPolicies != nil {
		switch v := in.CodeSigningPolicies.UntrustedArtifactOnDeployment; v {
		case "Warn", "Enforce":
			c.CodeSigningPolicies = *in.CodeSigningPolicies
		case "":
		default:
			return errValidation(v, "codeSigningPolicies.untrustedArtifactOnDeployment", "Member must satisfy enum value set: [Enforce, Warn]")
		}
	}
	return nil
}

// CreateCodeSigningConfig stores a new config in region.
func (p *Platform) CreateCodeSigningConfig(region string, in CodeSigningInput) (CodeSigningConfig, error) {
	if in.AllowedPublishers == nil {
		return CodeSigningConfig{}, errInvalid("AllowedPublishers is required")
	}
	b := make([]byte, 9)
	rand.Read(b)
	id := "csc-" + hex.EncodeToString(b)[:17] // as long as AWS's ids ("csc-077c33b4c19e26036")
	c := CodeSigningConfig{CodeSigningConfigId: id,
		CodeSigningConfigArn: "arn:aws:lambda:" + region + ":" + accountID + ":code-signing-config:" + id,
		CodeSigningPolicies:  CodeSigningPolicies{UntrustedArtifactOnDeployment: "Warn"}, // AWS's default
		LastModified:         urlTime(time.Now())}
	if err := in.apply(&c); err != nil {
		return CodeSigningConfig{}, err
	}
	p.commitMu.Lock()
	defer p.commitMu.Unlock()
	return c, p.saveCSC(region, &c)
}

// GetCodeSigningConfig is the config an ARN names.
func (p *Platform) GetCodeSigningConfig(arn string) (CodeSigningConfig, error) {
	c, err := p.loadCSC(arn)
	if err != nil || c == nil {
		return CodeSigningConfig{}, errors.Join(err, errCSCNotFound(arn))
	}
	return *c, nil
}

// UpdateCodeSigningConfig changes the given fields; LastModified moves.
func (p *Platform) UpdateCodeSigningConfig(arn string, in CodeSigningInput) (CodeSigningConfig, error) {
	p.commitMu.Lock()
	defer p.commitMu.Unlock()
	c, err := p.loadCSC(arn)
	if err != nil || c == nil {
		return CodeSigningConfig{}, errors.Join(err, errCSCNotFound(arn))
	}
	if err := in.apply(c); err != nil {
		return CodeSigningConfig{}, err
	}
	c.LastModified = urlTime(time.Now())
	return *c, p.saveCSC(cscArnRE.FindStringSubmatch(arn)[1], c)
}

// DeleteCodeSigningConfig removes a config no function uses (AWS's DeleteCodeSigningConfig:
// "You can delete the code signing configuration only if no function is using it").
func (p *Platform) DeleteCodeSigningConfig(arn string) error {
	p.commitMu.Lock()
	defer p.commitMu.Unlock()
	c, err := p.loadCSC(arn)
	if err != nil || c == nil {
		return errors.Join(err, errCSCNotFound(arn))
	}
	if users := p.functionsUsingCSC(arn); len(users) > 0 {
		return errConflict("The code signing configuration %s is used by %d function(s): remove it from them first", arn, len(users))
	}
	m := cscArnRE.FindStringSubmatch(arn)
	return os.Remove(filepath.Join(p.cscDir(), m[1], m[3]+".json"))
}

// ListCodeSigningConfigs lists the configs of region by ARN, a page at a time.
func (p *Platform) ListCodeSigningConfigs(region, marker string, max int) ([]CodeSigningConfig, string, error) {
	files, _ := filepath.Glob(filepath.Join(p.cscDir(), region, "csc-*.json"))
	var all []CodeSigningConfig
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, "", err
		}
		var c CodeSigningConfig
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, "", err
		}
		all = append(all, c)
	}
	// Oldest first, so the newest is last, as AWS lists them (the recording reads the last).
	id := func(c CodeSigningConfig) string { return c.LastModified + " " + c.CodeSigningConfigArn }
	sort.Slice(all, func(i, j int) bool { return id(all[i]) < id(all[j]) })
	return pageAfter(all, marker, max, id)
}

// functionsUsingCSC are the ARNs of the functions whose config arn is.
func (p *Platform) functionsUsingCSC(arn string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := []string{}
	for k, f := range p.functions {
		if f.CodeSigningConfigArn == arn {
			out = append(out, k.arn())
		}
	}
	sort.Strings(out)
	return out
}

// ListFunctionsByCodeSigningConfig lists the ARNs of the functions using a config.
func (p *Platform) ListFunctionsByCodeSigningConfig(arn, marker string, max int) ([]string, string, error) {
	if _, err := p.GetCodeSigningConfig(arn); err != nil {
		return nil, "", err
	}
	return pageAfter(p.functionsUsingCSC(arn), marker, max, func(s string) string { return s })
}

// PutFunctionCodeSigningConfig gives a function a config; the config is checked first.
func (p *Platform) PutFunctionCodeSigningConfig(key fnKey, arn string) error {
	c, err := p.loadCSC(arn)
	if err != nil {
		return err
	}
	if c == nil {
		return &apiError{http.StatusNotFound, "CodeSigningConfigNotFoundException",
			"The code signing configuration cannot be found. Check that the provided configuration is not deleted: " + arn + ".", ""}
	}
	_, err = p.replace(key, func(next *Function) error {
		next.CodeSigningConfigArn = arn
		return nil
	})
	return err
}

// GetFunctionCodeSigningConfig is the function's config's ARN ("" when it has none).
func (p *Platform) GetFunctionCodeSigningConfig(key fnKey) (string, error) {
	f, err := p.function(key)
	if err != nil {
		return "", err
	}
	return f.CodeSigningConfigArn, nil
}

// DeleteFunctionCodeSigningConfig removes the function's config (none: no error, as recorded).
func (p *Platform) DeleteFunctionCodeSigningConfig(key fnKey) error {
	_, err := p.replace(key, func(next *Function) error {
		next.CodeSigningConfigArn = ""
		return nil
	})
	return err
}
