package platform

import (
	"maps"
	"net/http"
	"regexp"
	"strings"
)

// The tags API (TagResource, UntagResource, ListTags) on function ARNs. Tags are kept with the
// function (function.json). The platform's own faascope:* tags steer it (function.go), so
// tagging one is validated as at CreateFunction (checkTags) and changes behaviour as setting it
// there would: the function's warm instances retire and the next invocation starts one under
// the new settings. Other tags are only kept, as AWS keeps them: instances stay warm.

// Lambda's tag limits ("Tag-based access control" / TagResource): 50 tags per function, keys of
// 1-128 characters not starting with "aws:", values up to 256 characters.
const (
	maxTagsPerFunction = 50
	maxTagKeyLen       = 128
	maxTagValueLen     = 256
)

// taggableARN is a function ARN, optionally qualified (which AWS refuses with its own message).
var taggableARN = regexp.MustCompile(`^arn:(aws[a-zA-Z-]*):lambda:([a-z0-9-]+):(\d{12}):function:([a-zA-Z0-9_-]{1,64})(:(\$LATEST|[a-zA-Z0-9_-]+))?$`)

// functionOfARN resolves the resource of a tags request to a function (in the ARN's region).
func functionOfARN(arn string) (fnKey, error) {
	m := taggableARN.FindStringSubmatch(arn)
	if m == nil {
		return fnKey{}, &apiError{http.StatusBadRequest, "ValidationException",
			"1 validation error detected: Value '" + arn + "' at 'resource' failed to satisfy constraint: " +
				"Member must satisfy regular expression pattern: arn:(aws[a-zA-Z-]*)?:lambda:[a-z0-9-]+:\\d{12}:function:[a-zA-Z0-9-_]+", ""}
	}
	if m[5] != "" {
		return fnKey{}, errInvalid("Tags on function aliases and versions are not supported. Please specify a function ARN.")
	}
	if m[3] != accountID { // another account's function: none this platform knows
		return fnKey{}, &apiError{http.StatusNotFound, "ResourceNotFoundException", "Function not found: " + arn, ""}
	}
	return fnKey{m[2], m[4]}, nil
}

// checkTagLimits applies Lambda's limits to a function's whole set of tags.
func checkTagLimits(tags map[string]string) error {
	if len(tags) > maxTagsPerFunction {
		return errInvalid("Number of tags exceeds resource tag limit.")
	}
	for k, v := range tags {
		if k == "" || len([]rune(k)) > maxTagKeyLen || strings.HasPrefix(strings.ToLower(k), "aws:") {
			return errInvalid("Tags: the key %q must have 1 to %d characters and not start with \"aws:\"", k, maxTagKeyLen)
		}
		if len([]rune(v)) > maxTagValueLen {
			return errInvalid("Tags: the value of %q must have at most %d characters", k, maxTagValueLen)
		}
	}
	return nil
}

// steersPlatform says whether a tag key is one of the platform's own (faascope:*).
func steersPlatform(key string) bool { return strings.HasPrefix(key, "faascope:") }

// TagResource adds or replaces tags of the function the ARN names.
func (p *Platform) TagResource(arn string, tags map[string]string) error {
	name, err := functionOfARN(arn)
	if err != nil {
		return err
	}
	if len(tags) == 0 {
		return errInvalid("Tags: at least one tag is required")
	}
	return p.retag(name, func(t map[string]string) {
		maps.Copy(t, tags)
	})
}

// UntagResource removes tags (missing keys are no error, as on AWS).
func (p *Platform) UntagResource(arn string, keys []string) error {
	name, err := functionOfARN(arn)
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		return errInvalid("TagKeys: at least one key is required")
	}
	return p.retag(name, func(t map[string]string) {
		for _, k := range keys {
			delete(t, k)
		}
	})
}

// ListTags returns the function's tags.
func (p *Platform) ListTags(arn string) (map[string]string, error) {
	name, err := functionOfARN(arn)
	if err != nil {
		return nil, err
	}
	f, err := p.function(name)
	if err != nil {
		return nil, err
	}
	return maps.Clone(f.Tags), nil
}

// retag applies a change to a copy of the function's tags and commits it; a change of any
// faascope:* tag starts a new generation (warm instances retire), others leave instances be.
func (p *Platform) retag(key fnKey, change func(map[string]string)) error {
	_, err := p.replace(key, func(next *Function) error {
		tags := maps.Clone(next.Tags)
		if tags == nil {
			tags = map[string]string{}
		}
		change(tags)
		if err := checkTagLimits(tags); err != nil {
			return err
		}
		steering := false
		for k := range tags {
			steering = steering || (steersPlatform(k) && tags[k] != next.Tags[k])
		}
		for k := range next.Tags {
			_, kept := tags[k]
			steering = steering || (steersPlatform(k) && !kept)
		}
		next.Tags = tags
		if err := p.checkTags(next); err != nil {
			return err
		}
		// AWS gives $LATEST a new RevisionId at each TagResource and UntagResource
		// (TestLambdaTags::test_tag_lifecycle's recording: uuid:1, 2, 3, 4, 5).
		next.Config.RevisionId = newRevision()
		if steering {
			next.Generation = p.newGeneration()
		}
		return nil
	})
	return err
}
