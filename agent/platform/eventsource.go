package platform

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Event source mappings. The local platform has no event sources (no SQS queue, Kinesis or
// DynamoDB stream, Kafka or MQ broker), so no mapping can exist: Get, Update and Delete of any
// UUID answer not found and the list is empty, as Lambda answers for a UUID it does not have;
// Create makes Lambda's own checks first, in the order and words of AWS's recorded answers
// (test_event_source_mapping_exceptions), then refuses because the source cannot be reached,
// as Lambda refuses a mapping to a source that does not exist.

// EventSourceMappingInput is what CreateEventSourceMapping checks of its request.
type EventSourceMappingInput struct {
	FunctionName      string
	EventSourceArn    string
	DestinationConfig json.RawMessage
}

// CreateEventSourceMapping refuses every mapping; see above for the order of the answers.
func (p *Platform) CreateEventSourceMapping(region string, in EventSourceMappingInput) error {
	if in.EventSourceArn == "" {
		// AWS: no source is a source it does not recognise (create_no_event_source_arn)
		return errInvalid("Unrecognized event source.")
	}
	dest := len(in.DestinationConfig) > 0 && string(in.DestinationConfig) != "null"
	if dest && strings.HasPrefix(in.EventSourceArn, "arn:aws:sqs:") {
		// destinations are for stream and Kafka sources only; AWS checks it before the function
		// (destination_config_failure names a function that does not exist)
		return errInvalid("Unsupported DestinationConfig parameter for given event source mapping type.")
	}
	ref, err := parseFunctionRef(in.FunctionName, "", region)
	if err != nil {
		return err
	}
	if !p.exists(ref.fnKey) {
		return errInvalid("Function does not exist") // create_unknown_params: not a 404
	}
	return errInvalid("The event source %s cannot be reached: this local platform has no event sources (SQS, Kinesis, DynamoDB streams, Kafka, MQ)", in.EventSourceArn)
}

// EventSourceMapping answers Get, Update and Delete of a mapping: there is none.
func (p *Platform) EventSourceMapping(uuid string) error {
	return &apiError{http.StatusNotFound, "ResourceNotFoundException", "The resource you requested does not exist.", ""}
}
