package platform

import (
	"maps"
	"net/http"
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

// taggablePattern is TagResource's, UntagResource's and ListTags' Resource pattern (AWS's
// message quotes it): a function (qualified, which AWS refuses with its own message), a layer, a
// code signing config, an event source mapping or a capacity provider.
const taggablePattern = `arn:(aws[a-zA-Z-]*):lambda:(eusc-)?[a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\d{1}:\d{12}:(function:[a-zA-Z0-9-_]+(:(\$LATEST|[a-zA-Z0-9-_]+))?|layer:([a-zA-Z0-9-_]+)|code-signing-config:csc-[a-z0-9]{17}|event-source-mapping:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|capacity-provider:[a-zA-Z0-9-_]+)`

var taggableARN = wholeMatch(taggablePattern)

// functionOfARN resolves the resource of a tags request to a function (in the ARN's region).
// The platform has no event source mappings or capacity providers: theirs are not found, with
// AWS's messages.
func functionOfARN(arn string) (fnKey, error) {
	if !taggableARN.MatchString(arn) {
		return fnKey{}, errValidations(patternFault(arn, "resource", taggablePattern))
	}
	parts := strings.Split(arn, ":") // arn:partition:lambda:region:account:type:name[:qualifier]
	switch parts[5] {
	case "event-source-mapping":
		return fnKey{}, &notFoundError{"Event source mapping not found: " + arn}
	case "capacity-provider":
		return fnKey{}, &notFoundError{"Capacity provider not found: " + arn}
	case "function":
	default:
		return fnKey{}, errInvalid("Tags on %ss are not implemented by this local platform (it tags functions)", parts[5])
	}
	if len(parts) == 8 {
		return fnKey{}, errInvalid("Tags on function aliases and versions are not supported. Please specify a function ARN.")
	}
	if parts[4] != accountID { // another account's function: none this platform knows
		return fnKey{}, &apiError{http.StatusNotFound, "ResourceNotFoundException", "Function not found: " + arn, ""}
	}
	return fnKey{parts[3], parts[6]}, nil
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
		return errInvalid("An error occurred and the request cannot be processed.") // AWS's words for no tags
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
		// No key sends no tagKeys parameter at all: AWS's model says it is null.
		return &apiError{http.StatusBadRequest, "ValidationException",
			"1 validation error detected: Value null at 'tagKeys' failed to satisfy constraint: Member must not be null", ""}
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
