// A nodejs*.x function as a user zips it: no bootstrap, no runtime client, Handler index.handler.
// Like LocalStack's introspection and uncaught-exception functions (whose answers on AWS are
// recorded in tests/conformance/recorded/localstack_runtimes).
exports.handler = async function (event, context) {
  if (event && event.error_msg !== undefined) {
    throw Error(`Error: ${event.error_msg}`);
  }
  return {
    environment: process.env,
    ctx: {
      function_name: context.functionName,
      function_version: context.functionVersion,
      invoked_function_arn: context.invokedFunctionArn,
      memory_limit_in_mb: context.memoryLimitInMB,
      aws_request_id: context.awsRequestId,
      log_group_name: context.logGroupName,
      log_stream_name: context.logStreamName,
      remaining_time_in_millis: context.getRemainingTimeInMillis(),
    },
    packages: [],
    node: process.versions.node.split(".")[0],
    node_release: process.versions.node,
    executable: process.execPath,
  };
};
